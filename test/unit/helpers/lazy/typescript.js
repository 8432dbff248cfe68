// `typescript` inside unit tests (jest.config.js moduleNameMapper), loaded on first use. @pulumi/pulumi
// requires it when imported, for function serialization, which only dynamic resources use; Jest evaluates
// every module again in each test file, and TypeScript's 9 MB cost a quarter of a second a file.
const path = require("path");

let real;
const load = () => (real ??= require(path.join(__dirname, "../../../../node_modules/typescript")));

module.exports = new Proxy(
  {},
  {
    get: (_, key) => load()[key],
    has: (_, key) => key in load(),
    ownKeys: () => Reflect.ownKeys(load()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Object.getOwnPropertyDescriptor(load(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
  },
);
