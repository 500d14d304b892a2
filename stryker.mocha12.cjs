// Stryker's mocha runner 9.5 (the last line for Node 20) requires mocha/lib/cli/{run-helpers,options,
// collect-files} without an extension; mocha 12 ships them as .cjs. Loaded with --require (NODE_OPTIONS, so
// Stryker's worker processes get it too), this retries exactly those requests with .cjs. Nothing else changes.
'use strict'
const Module = require('node:module')
const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  try {
    return resolve.call(this, request, ...rest)
  } catch (err) {
    if (/[\\/]mocha[\\/]lib[\\/]cli[\\/][\w-]+$/.test(request)) return resolve.call(this, request + '.cjs', ...rest)
    throw err
  }
}
