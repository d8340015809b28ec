/** The SDK's own version (kept equal to packages/sdk/package.json by a test). */
export const SDK_VERSION = '0.1.0';
