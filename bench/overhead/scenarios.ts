/**
 * The routes bench/overhead measures, as data: one code path drives every scenario. A scenario
 * names its public request, how to tell a good answer, the simulator behind it, and what the bare
 * pass-through must do to reach that simulator as the gateway's profile does (its upstream path
 * and the vendor's auth header).
 */

/** One route under test. */
export interface Scenario {
  readonly name: 'alpha' | 'images';
  /** The public path, the same for all three targets (the simulator's own path too). */
  readonly path: string;
  readonly body: string;
  /** What the request is, for the header line. */
  readonly describe: string;
  /** The simulator process to start (sim-process.ts, BENCH_SIM_PROFILE). */
  readonly simProfile: 'alpha-native' | 'zeta-openai';
  /** The gateway's variables that point its channel at the simulator. */
  readonly gatewayEnv: (simUrl: string, simKey: string) => Record<string, string>;
  /** The path the gateway's profile calls on the vendor; the pass-through sends every request there. */
  readonly upstreamPath: string;
  /** The vendor's auth header, as the profile's `auth` writes it. */
  readonly auth: (simKey: string) => { header: string; value: string };
  /** True when a 200 answer's body carries the image. */
  readonly isImage: (text: string) => boolean;
}

const ALPHA_PATH = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const PNG_BASE64 = 'iVBORw0KGgo';

/** The alpha route of the issue: a 170-byte text-to-image generateContent (docs/spec/interface.md 2.1). */
const alpha: Scenario = {
  name: 'alpha',
  path: ALPHA_PATH,
  body: JSON.stringify({
    contents: [{ role: 'user', parts: [{ text: 'a red bicycle' }] }],
    generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
  }),
  describe: 'text-to-image',
  simProfile: 'alpha-native',
  gatewayEnv: (url, key) => ({ ALPHA_BASE_URL: url, ALPHA_API_KEY: key }),
  upstreamPath: ALPHA_PATH,
  auth: (key) => ({ header: 'x-goog-api-key', value: key }),
  isImage: (text) => {
    const parts = (JSON.parse(text) as { candidates?: { content?: { parts?: { inlineData?: { mimeType?: string } }[] } }[] }).candidates?.[0]?.content?.parts;
    return parts?.some((p) => p.inlineData?.mimeType === 'image/png') ?? false;
  },
};

/**
 * The OpenAI images route, where the figures were taken (channel zeta-images). The answer
 * is `b64_json`, the GPT-image-style model's default (it refuses `response_format`, as the official
 * SDK's GPT image models do): a `url` answer would become a gateway link stored in the store
 * (docs/client-api.md, "Links instead of vendor URLs"), work the bare pass-through does not do, so the
 * comparison would not be like for like.
 */
const images: Scenario = {
  name: 'images',
  path: '/v1/images/generations',
  body: JSON.stringify({ model: 'zeta-image-1', prompt: 'a red bicycle', n: 1, size: '1024x1024' }),
  describe: 'zeta-image-1, b64_json (its default)',
  simProfile: 'zeta-openai',
  gatewayEnv: (url, key) => ({ ZETA_BASE_URL: url, ZETA_API_KEY: key }),
  upstreamPath: '/v1/images/generations',
  auth: (key) => ({ header: 'authorization', value: `Bearer ${key}` }),
  isImage: (text) => (JSON.parse(text) as { data?: { b64_json?: string }[] }).data?.[0]?.b64_json?.startsWith(PNG_BASE64) ?? false,
};

/** Every scenario, in the order they run. */
export const SCENARIOS: readonly Scenario[] = [alpha, images];

/** The public path of the big-body phase (the alpha route, whose limit is 20 MB). */
export const BIG_BODY_PATH = ALPHA_PATH;

/** A legal generateContent body of exactly `bytes` bytes: a prompt and one inline image, padded to size. */
export function bigAlphaBody(bytes: number): Buffer {
  const head = '{"contents":[{"role":"user","parts":[{"text":"make it a watercolour"},{"inlineData":{"mimeType":"image/png","data":"';
  const tail = '"}}]}],"generationConfig":{"responseModalities":["IMAGE"],"imageConfig":{"aspectRatio":"1:1","imageSize":"1K"}}}';
  const room = bytes - head.length - tail.length;
  const data = Buffer.alloc(Math.floor((room * 3) / 4), 7)
    .toString('base64')
    .slice(0, room - (room % 4));
  return Buffer.from(head + data + ' '.repeat(room - data.length) + tail);
}
