import { planUpgrade, REQUIRE_VERSION_FLOORS, UpgradeRefused } from "../../../../components/upgrade/plan";

test("first install, no change, and a rolling upgrade", () => {
  expect(planUpgrade(undefined, "3.85.0").kind).toBe("install");
  expect(planUpgrade("3.85.0", "3.85.0").kind).toBe("none");
  expect(planUpgrade("3.85.0", "3.86.1")).toMatchObject({ kind: "rolling", from: "3.85.0", to: "3.86.1" });
  expect(planUpgrade("3.82.1", "3.84.0").summary).toMatch(
    /migrate while 3.82.1 serves, then roll \(no downtime\)/,
  );
});

test.each(REQUIRE_VERSION_FLOORS.map((f) => [f.floor, f.migrations]))(
  "crossing the %s floor needs downtime",
  (floor, migrations) => {
    const [major, minor] = floor.split(".").map(Number);
    const below = `${major}.${minor - 1}.0`;
    const plan = planUpgrade(below, floor);
    expect(plan).toMatchObject({ kind: "stop-the-world", floor, migrations, minimumDowntimeSeconds: 120 });
    expect(plan.summary).toMatch(/NEEDS DOWNTIME/);
    expect(plan.summary).toContain(`older than ${floor}`);
  },
);

test("being at or above a floor already means rolling", () => {
  expect(planUpgrade("3.85.0", "3.86.0").kind).toBe("rolling");
  expect(planUpgrade("3.87.0", "3.90.2").kind).toBe("rolling");
});

test("a jump across two floors is refused with the path to take", () => {
  expect(() => planUpgrade("3.80.0", "3.87.1")).toThrow(UpgradeRefused);
  expect(() => planUpgrade("3.80.0", "3.87.1")).toThrow(/3.80.0 -> 3.82.1 -> 3.85.0 -> 3.87.0 -> 3.87.1/);
});

test("downgrades to an older minor release are refused; patch downgrades roll", () => {
  expect(() => planUpgrade("3.86.0", "3.85.0")).toThrow(/migrations do not run backwards/);
  expect(planUpgrade("3.85.2", "3.85.1").kind).toBe("rolling");
});

test("while idle, migrations meet no old process: any forward jump runs offline", () => {
  expect(planUpgrade("3.80.0", "3.87.1", { deployed: true, target: true }).kind).toBe("offline");
  expect(() => planUpgrade("3.86.0", "3.85.0", { deployed: true, target: true })).toThrow(/backwards/);
});

test("versions that are not versions are refused", () => {
  expect(() => planUpgrade("3.85", "3.86.0")).toThrow(/not a version/);
});
