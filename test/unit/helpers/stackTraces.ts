// Jest maps every stack trace through source maps (source-map-support, which also reads the maps
// @pulumi/pulumi ships). The Pulumi runtime takes a stack trace for every promise it makes (runtime/
// debuggable.js), and mapping those was most of a program render under Jest; it prints them only for
// PULUMI_DEBUG_PROMISE_LEAKS, so they are left out unless that is set, and then left unmapped. Every other
// stack trace is mapped as before. (setupFilesAfterEnv in jest.config.js: after Jest installs the mapping.)
export {};

const mapped = Error.prepareStackTrace;
const DEBUGGABLE = /[\\/]@pulumi[\\/]pulumi[\\/]runtime[\\/]debuggable\.js$/;
const unmapped = (error: Error, callSites: NodeJS.CallSite[]) =>
  [String(error), ...callSites.map((site) => `    at ${site}`)].join("\n");

Error.prepareStackTrace = (error, callSites) => {
  if (!DEBUGGABLE.test(callSites[0]?.getFileName() ?? "")) {
    return mapped ? mapped(error, callSites) : unmapped(error, callSites);
  }
  return process.env.PULUMI_DEBUG_PROMISE_LEAKS ? unmapped(error, callSites) : String(error);
};
