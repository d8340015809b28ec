/** The browser bundle's entry (dist/browser/vitals-capture.js): the API, with `<vitals-measure>` registered. */
import { defineVitalsMeasure } from './element.js';

export * from './index.js';
defineVitalsMeasure();
