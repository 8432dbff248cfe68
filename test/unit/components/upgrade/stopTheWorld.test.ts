// When the stop-the-world step, on its way out, scales back what it stopped: only on the revert path.
import { shouldRestart } from "../../../../components/upgrade/stopTheWorld";

const stopped = { name: "pulp-api", replicas: 2, generation: 7 };
const live = (generation: number, replicas: number) => ({ metadata: { generation }, spec: { replicas } });

test("reverted: nothing touched the Deployment since it was stopped, so it is started again", () => {
  expect(shouldRestart(stopped, live(7, 0))).toBe(true);
});

test("upgraded: the new release's apply changed it (a new generation), so it is left alone", () => {
  expect(shouldRestart(stopped, live(8, 2))).toBe(false);
  expect(shouldRestart(stopped, live(9, 0))).toBe(false); // e.g. the new config asks for idle
});

test("someone scaled it by hand, or it was at zero already: left alone", () => {
  expect(shouldRestart(stopped, live(7, 1))).toBe(false);
  expect(shouldRestart({ ...stopped, replicas: 0 }, live(7, 0))).toBe(false);
});
