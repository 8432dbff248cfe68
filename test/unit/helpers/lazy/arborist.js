// `@npmcli/arborist` inside unit tests (jest.config.js moduleNameMapper), loaded on first use. @pulumi/pulumi
// requires it when imported, for runtime.computeCodePaths (`new Arborist(...)`, its only use there), which
// nothing here calls; Jest evaluates every module again in each test file, and Arborist with its
// dependencies cost almost half a second a file.
const path = require("path");

let real;
const load = () => (real ??= require(path.join(__dirname, "../../../../node_modules/@npmcli/arborist")));

function Arborist(...args) {
  const Real = load();
  return new Real(...args);
}
module.exports = Arborist;
module.exports.Arborist = Arborist;
