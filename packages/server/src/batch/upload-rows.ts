/**
 * The `uploads` row written when an object slot is handed out: by presign (the URL is the
 * credential) and by the session fallback upload (the session token is). The object's TTL runs
 * from here whatever happens next (spec: Limits, uploaded-object TTL).
 */
import type { AppContext } from '../context.js';
import type { KeyRecord } from '../store/orgs-keys.js';

export async function insertUploadSlot(
  ctx: AppContext,
  slot: {
    objectKey: string;
    key: KeyRecord;
    kind: string;
    contentType: string;
    maxBytes: number;
    urlExpiresAt: number;
    now: number;
  },
): Promise<void> {
  await ctx.db.db
    .insertInto('uploads')
    .values({
      object_key: slot.objectKey,
      key_id: slot.key.id,
      org_id: slot.key.orgId,
      kind: slot.kind,
      content_type: slot.contentType,
      max_bytes: slot.maxBytes,
      created_at: slot.now,
      url_expires_at: slot.urlExpiresAt,
      expires_at: slot.now + ctx.config.uploadTtlSec * 1000,
      uploaded_at: null,
      size: null,
      sha256: null,
      job_id: null,
      deleted_at: null,
    })
    .execute();
}
