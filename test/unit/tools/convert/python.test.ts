// Unit test (no Pulumi, no cluster): pythonLiteral, which reads the values of pulp-operator's
// custom_pulp_settings ConfigMap (Python source the operator pastes into settings.py). Proves the literals a
// setting takes come back as data, and anything more (a name, a call, a set, an f-string) as undefined, so
// that the converter notes it rather than copying a wrong value.
import { pythonLiteral } from "../../../../tools/convert/python";

test.each([
  ["1440", 1440],
  ["-3", -3],
  ["0", 0],
  ["2.5", 2.5],
  ["1e3", 1000],
  ["True", true],
  ["False", false],
  ["None", null],
  ['"/pulp/"', "/pulp/"],
  ["'it\\'s'", "it's"],
  ['"a\\nb"', "a\nb"],
  ['  "padded"  ', "padded"],
  ['["sha256", "sha512",]', ["sha256", "sha512"]],
  ["('a', 1)", ["a", 1]],
  ["[]", []],
  [
    "{'dynaconf_merge': True, 'loggers': {'': {'level': 'DEBUG', 'handlers': ['console']}}}",
    { dynaconf_merge: true, loggers: { "": { level: "DEBUG", handlers: ["console"] } } },
  ],
])("%s is %j", (source, value) => {
  expect(pythonLiteral(source)).toEqual(value);
});

test.each([
  "os.environ['X']",
  "Truex",
  "true",
  "{1, 2}",
  "{1: 'a'}",
  "f'{x}'",
  "b'bytes'",
  "'''triple'''",
  "'unterminated",
  "[1, 2",
  "1_000",
  "007",
  "'a' + 'b'",
  "'\\d'",
  "",
])("%j is not a literal read here", (source) => {
  expect(pythonLiteral(source)).toBeUndefined();
});
