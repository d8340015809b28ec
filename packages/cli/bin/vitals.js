#!/usr/bin/env node
// Committed executable wrapper: `tsc -b` (the root `prepare`) builds dist/, whose files are not
// executable; this file is, so `npx vitals` works right after `npm install`.
import '../dist/bin.js';
