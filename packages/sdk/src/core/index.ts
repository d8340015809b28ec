/** The isomorphic core of the SDK: no Node APIs (eslint guards this folder). */
export { VitalsClient, type VitalsClientOptions } from './client.js';
export { ApiError, NetworkError, StreamError, VitalsError, WaitTimeoutError, codeForStatus } from './errors.js';
export {
  ClockWatch,
  DRIFT_WARN_MS,
  consoleLogger,
  silentLogger,
  serverClockOf,
  type Clock,
  type DriftReport,
  type Logger,
} from './clock.js';
export {
  HttpClient,
  defaultSleep,
  resolveHttpConfig,
  type ApiResponse,
  type Auth,
  type FetchLike,
  type HttpConfig,
  type RequestOptions,
  type Sleep,
} from './http/transport.js';
export { DEFAULT_RETRY, isRetryableStatus, parseResetSeconds, retryDelayMs, type RetryPolicy } from './http/retry.js';
export {
  defaultUploader,
  fetchUploader,
  xhrUploader,
  sizeOf,
  type PutRequest,
  type StreamSource,
  type UploadBody,
  type Uploader,
  type UploadProgress,
} from './http/upload.js';
export { Measurements } from './resources/measurements.js';
export { Users, type PageQuery, type UserHistoryQuery } from './resources/users.js';
export { Logs, LOGS_MIN_INTERVAL_MS, type LogsIterateOptions, type LogsQuery } from './resources/logs.js';
export { Uploads } from './resources/uploads.js';
export { END_POLL_MS, Jobs, pollUntilTerminal, type SubmitInput, type WaitOptions } from './resources/jobs.js';
export { Sessions } from './resources/sessions.js';
export { Models, type ModelGrantInfo, type ModelGrantInput } from './resources/models.js';
export { Auth as AuthResource } from './resources/auth.js';
export { FramesWriter, readFramesFile, packets, type FaceCropInput } from './frames/frames-file.js';
export {
  WebhookVerificationError,
  signWebhook,
  verifyJobWebhook,
  verifyOrgWebhook,
  type HeaderBag,
  type JobWebhookInput,
  type OrgWebhookInput,
  type SignedWebhook,
  type WebhookDelivery,
} from './webhooks/verify.js';
export { StreamSession, type Delivery, type SessionState, type StreamSessionOptions } from './live/session.js';
export { SessionFallback } from './live/fallback.js';
export { EventHub, type StreamEvent, type StreamEventMap } from './live/events.js';
export type * from './live/events.js';
export {
  globalWebSocketFactory,
  httpBaseFromWsUrl,
  readTokenClaims,
  type TokenClaims,
  type WebSocketFactory,
  type WebSocketLike,
} from './live/socket.js';
export { SDK_VERSION } from './version.js';
export * from './types.js';
export {
  EXIT_CODES,
  ERROR_STATUS,
  FEATURES,
  CLIENT_DEFAULT_MAX_DURATION_SEC,
  encodeFaceCrop,
  encodeQuality,
  encodeTelemetry,
  encodeAuxChunks,
  decodePacket,
  quantizeTelemetry,
  encodeFramesFile,
  decodeFramesFile,
  sha256Hex,
  type ErrorCode,
  type Feature,
  type Packet,
  type Telemetry,
} from '@vitals/protocol';
export {
  FaceCropper,
  cropFromImageData,
  padBox,
  BoxKalman,
  cropResizeRgb,
  meanLuma,
  type Box,
  type BoxKalmanOptions,
  type ImageDataLike,
} from './crop.js';
