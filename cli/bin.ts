#!/usr/bin/env node
// The polyfill must run before libp2p is loaded: keep this import first.
import '../node/polyfill.js'
import { main } from './main.js'
import { exitQuietlyWhenOutputCloses } from './output.js'

exitQuietlyWhenOutputCloses()
process.exitCode = await main(process.argv)
