/** The WebSocket path (the query string is ignored: the token travels only in `hello`). */
export const STREAM_PATH = '/sdk/v1/cloud/stream';
