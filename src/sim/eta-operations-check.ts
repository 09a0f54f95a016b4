/**
 * The submit checks of the eta-operations simulator (see the doc comment of eta-operations.ts for
 * the rules and their messages). Kept apart so the server file stays readable.
 */

/** An inline image as the vendor takes it. */
export interface EtaImage {
  bytesBase64Encoded?: unknown;
  mimeType?: unknown;
}

/** The one instance of a submit. */
export interface EtaInstance {
  prompt?: unknown;
  image?: EtaImage;
  lastFrame?: EtaImage;
  referenceImages?: { image?: EtaImage; referenceType?: unknown }[];
}

const MIME_TYPES = ['image/png', 'image/jpeg', 'image/webp'];
const ASPECT_RATIOS = ['16:9', '9:16'];
const DURATIONS = [4, 6, 8];
const RESOLUTIONS = ['720p', '1080p'];
const PERSON_GENERATION = ['allow_all', 'allow_adult', 'dont_allow'];
const BODY_FIELDS = ['instances', 'parameters'];
const INSTANCE_FIELDS = ['prompt', 'image', 'lastFrame', 'referenceImages'];
/** What @google/genai sends in Gemini API mode (numberOfVideos is `sampleCount`). */
const PARAMETER_FIELDS = ['aspectRatio', 'durationSeconds', 'resolution', 'negativePrompt', 'personGeneration', 'sampleCount'];
/**
 * Vertex-only parameters: @google/genai refuses them in Gemini API mode ("only supported in … not in
 * Gemini Developer API mode"), so the Gemini API does not take them; refused by name, not as unknown.
 */
const VERTEX_ONLY = ['seed', 'generateAudio', 'storageUri', 'fps', 'pubsubTopic', 'compressionQuality', 'resizeMode'];
/** Most videos one operation makes (`sampleCount`, the SDK's numberOfVideos). */
export const MAX_SAMPLES = 4;
/** Standard or URL-safe alphabet, padding optional, never empty. */
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const MAX_REFERENCES = 3;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (xs: readonly unknown[]) => xs.map(String).join(', ');

/** The vendor's answer to a field it does not know (it rejects them, so the gateway must not send extras). */
function unknownField(obj: Record<string, unknown>, known: readonly string[], where: string): string | null {
  const extra = Object.keys(obj).find((k) => !known.includes(k));
  return extra === undefined ? null : `Invalid JSON payload received. Unknown name "${extra}" at '${where}': Cannot find field.`;
}

/** Checks an inline image; `where` is its path in the body. */
function badImage(image: unknown, where: string): string | null {
  if (!isObject(image)) return `${where} must be an object {bytesBase64Encoded, mimeType}.`;
  const extra = unknownField(image, ['bytesBase64Encoded', 'mimeType'], where);
  if (extra) return extra;
  if (typeof image.mimeType !== 'string' || !MIME_TYPES.includes(image.mimeType)) {
    return `${where}.mimeType must be one of ${list(MIME_TYPES)}; got ${JSON.stringify(image.mimeType ?? null)}.`;
  }
  const data = image.bytesBase64Encoded;
  if (typeof data !== 'string' || !BASE64.test(data) || data.replace(/=+$/, '').length % 4 === 1) {
    return `Invalid value at '${where}.bytes_base64_encoded' (TYPE_BYTES), Base64 decoding failed.`;
  }
  return null;
}

/** Checks the instance: prompt, frames and reference images. */
function badInstance(inst: unknown): string | null {
  const at = 'instances[0]';
  if (!isObject(inst)) return `${at} must be an object.`;
  const extra = unknownField(inst, INSTANCE_FIELDS, at);
  if (extra) return extra;
  if (typeof inst.prompt !== 'string' || inst.prompt.trim() === '') return `${at}.prompt is required and must be a non-empty string.`;
  for (const f of ['image', 'lastFrame'] as const) {
    if (inst[f] !== undefined) {
      const bad = badImage(inst[f], `${at}.${f}`);
      if (bad) return bad;
    }
  }
  if (inst.lastFrame !== undefined && inst.image === undefined) return `${at}.lastFrame requires ${at}.image (the first frame).`;
  if (inst.referenceImages === undefined) return null;
  const refs = inst.referenceImages;
  if (!Array.isArray(refs) || refs.length === 0 || refs.length > MAX_REFERENCES) {
    return `${at}.referenceImages must be an array of 1 to ${MAX_REFERENCES} reference images.`;
  }
  if (inst.image !== undefined || inst.lastFrame !== undefined) return `${at}.referenceImages cannot be combined with image or lastFrame.`;
  for (const [i, ref] of refs.entries()) {
    const where = `${at}.referenceImages[${i}]`;
    if (!isObject(ref)) return `${where} must be an object {image, referenceType}.`;
    const bad = unknownField(ref, ['image', 'referenceType'], where) ?? badImage(ref.image, `${where}.image`);
    if (bad) return bad;
    // The SDK sends its enum value (ASSET); the REST examples write it in lower case. These models
    // take asset references only (the SDK's type notes style references are a Veo 2 feature).
    const type = typeof ref.referenceType === 'string' ? ref.referenceType.toUpperCase() : ref.referenceType;
    if (type === 'STYLE') return `${where}.referenceType STYLE is not supported by this model; only ASSET reference images are.`;
    if (type !== 'ASSET') return `${where}.referenceType must be ASSET; got ${JSON.stringify(ref.referenceType ?? null)}.`;
  }
  return null;
}

/** Checks the parameters, alone and against the instance (reference-to-video is landscape, 8 s only). */
function badParameters(p: unknown, hasReferences: boolean): string | null {
  if (p === undefined) return null;
  if (!isObject(p)) return 'parameters must be an object.';
  const vertex = Object.keys(p).find((k) => VERTEX_ONLY.includes(k));
  if (vertex) return `\`${vertex}\` isn't supported by this model. Please remove it or refer to the Gemini API documentation for supported usage.`;
  const extra = unknownField(p, PARAMETER_FIELDS, 'parameters');
  if (extra) return extra;
  if (p.aspectRatio !== undefined && !ASPECT_RATIOS.includes(p.aspectRatio as string)) {
    return `parameters.aspectRatio must be one of ${list(ASPECT_RATIOS)}; got ${JSON.stringify(p.aspectRatio)}.`;
  }
  if (p.durationSeconds !== undefined && !DURATIONS.includes(p.durationSeconds as number)) {
    return `parameters.durationSeconds must be one of ${list(DURATIONS)} (a number); got ${JSON.stringify(p.durationSeconds)}.`;
  }
  if (p.resolution !== undefined && !RESOLUTIONS.includes(p.resolution as string)) {
    return `parameters.resolution must be one of ${list(RESOLUTIONS)}; got ${JSON.stringify(p.resolution)}.`;
  }
  const duration = (p.durationSeconds as number | undefined) ?? 8;
  if (p.resolution === '1080p' && duration !== 8) return 'parameters.resolution "1080p" requires parameters.durationSeconds 8.';
  if (p.negativePrompt !== undefined && typeof p.negativePrompt !== 'string') return 'parameters.negativePrompt must be a string.';
  if (p.sampleCount !== undefined && !(Number.isInteger(p.sampleCount) && (p.sampleCount as number) >= 1 && (p.sampleCount as number) <= MAX_SAMPLES)) {
    return `parameters.sampleCount must be an integer from 1 to ${MAX_SAMPLES}; got ${JSON.stringify(p.sampleCount)}.`;
  }
  if (p.personGeneration !== undefined && !PERSON_GENERATION.includes(p.personGeneration as string)) {
    return `parameters.personGeneration must be one of ${list(PERSON_GENERATION)}.`;
  }
  if (hasReferences && (p.aspectRatio ?? '16:9') !== '16:9') return 'referenceImages are only supported with parameters.aspectRatio "16:9".';
  if (hasReferences && duration !== 8) return 'referenceImages require parameters.durationSeconds 8.';
  return null;
}

/** The vendor's 400 message for a submit body, or null when it is acceptable. */
export function etaInvalid(body: unknown): string | null {
  if (!isObject(body)) return 'Invalid JSON payload received. The request body must be a JSON object.';
  const extra = unknownField(body, BODY_FIELDS, '');
  if (extra) return extra;
  const instances = body.instances;
  if (!Array.isArray(instances) || instances.length !== 1) return 'instances must hold exactly one instance.';
  const bad = badInstance(instances[0]);
  if (bad) return bad;
  return badParameters(body.parameters, (instances[0] as EtaInstance).referenceImages !== undefined);
}

/** How many videos a valid submit body asks for (`parameters.sampleCount`, default 1). */
export function etaSamples(body: unknown): number {
  const p = isObject(body) && isObject(body.parameters) ? body.parameters : {};
  return typeof p.sampleCount === 'number' ? p.sampleCount : 1;
}

/** The prompt of a submit body, '' when there is none (markers are read from it). */
export function etaPrompt(body: unknown): string {
  const inst = isObject(body) && Array.isArray(body.instances) ? (body.instances[0] as unknown) : undefined;
  return isObject(inst) && typeof inst.prompt === 'string' ? inst.prompt : '';
}
