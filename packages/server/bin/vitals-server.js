#!/usr/bin/env node
// Committed executable wrapper, like packages/cli/bin/vitals.js: npm links a workspace's bins
// before the root `prepare` (`tsc -b`) has built dist/, and skips a bin whose target is missing,
// so a bin pointing into dist/ stayed unlinked after the first install. This file exists in the
// checkout, so `npx --no vitals-server ...` resolves right after one `npm install` or `npm ci`.
import '../dist/bin.js';
