/** Unit tests run without a cluster; e2e tests need the embedded cluster (npm run test:e2e). */
const common = {
  preset: "ts-jest",
  testEnvironment: "node",
  // Transpile only: `npm run build` (tsc --noEmit) and `npm run lint` type-check; per-file type checking
  // here doubled the unit time on a 2-core machine.
  transform: { "^.+\\.ts$": ["ts-jest", { isolatedModules: true }] },
};

module.exports = {
  // A program render takes about a second alone; 30 s leaves room for a busy 2-core machine.
  testTimeout: 30000,
  projects: [
    { ...common, displayName: "unit", testMatch: ["<rootDir>/test/unit/**/*.test.ts"] },
    { ...common, displayName: "e2e", testMatch: ["<rootDir>/test/e2e/**/*.test.ts"] },
  ],
};
