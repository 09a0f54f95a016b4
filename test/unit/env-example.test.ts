import assert from 'node:assert/strict';
import { test } from 'node:test';
import { channelsOfText } from '../../src/cli/channel-vars.js';
import { renderEnvExample } from '../../src/cli/env-example.js';
import { annotateChannels } from '../../src/cli/init-command.js';

const CHANNELS = `version: 1
channels:
  # a comment of the operator's
  - name: first
    profile: p
    base_url: \${ONE_URL}
    secrets: { key: "\${ONE_KEY}", region: "\${ONE_REGION:-eu}" }
    models: [m1, { name: m2, upstream: up2 }]
  - { name: second, profile: p, base_url: "\${ONE_URL}", secrets: { key: "\${TWO_KEY}" }, models: [m3] }
  - name: fixed
    profile: p
    base_url: https://vendor.example
    models: [m4]
`;

test('channel variables: each with its field and default, each channel with its line and public model names', () => {
  const found = channelsOfText('channels.yaml', CHANNELS);
  assert.deepEqual(
    found.map((c) => [c.name, c.line, c.models, c.vars.map((v) => [v.name, v.field, v.default])]),
    [
      [
        'first',
        4,
        ['m1', 'm2'],
        [
          ['ONE_URL', 'base_url', null],
          ['ONE_KEY', 'secrets.key', null],
          ['ONE_REGION', 'secrets.region', 'eu'],
        ],
      ],
      [
        'second',
        9,
        ['m3'],
        [
          ['ONE_URL', 'base_url', null],
          ['TWO_KEY', 'secrets.key', null],
        ],
      ],
      ['fixed', 10, ['m4'], []],
    ],
  );
});

test('annotating puts one comment above each channel that needs variables and changes nothing else', () => {
  const text = annotateChannels(CHANNELS, channelsOfText('channels.yaml', CHANNELS));
  assert.equal(
    text,
    CHANNELS.replace('  - name: first', '  # Off (left out) until ONE_URL and ONE_KEY are set: see .env.example.\n  - name: first').replace(
      '  - { name: second',
      '  # Off (left out) until ONE_URL and TWO_KEY are set: see .env.example.\n  - { name: second',
    ),
  );
});

test('.env.example: settings with their defaults, each variable once under the first channel naming it, all commented out', () => {
  const text = renderEnvExample(
    '9.9.9',
    [
      { name: 'PORT', default: '8080', about: 'Port.' },
      { name: 'GATEWAY_ADMIN_KEY', default: null, about: 'Admin key.' },
    ],
    channelsOfText('channels.yaml', CHANNELS),
  );
  assert.match(text, /^# Generation Gateway 9\.9\.9:/);
  assert.match(text, /\n# Port\.\n#PORT=8080\n/);
  assert.match(text, /\n# Admin key\.\n#GATEWAY_ADMIN_KEY=\n/);
  assert.match(text, /# Channel first \(profile p, channels\.yaml:4\): m1, m2\n# base_url: the vendor API's base URL\.\n#ONE_URL=\n/);
  assert.match(text, /# secrets\.region: the credential "region" its requests are signed with\. Unset, it is "eu"\.\n#ONE_REGION=eu\n/);
  assert.equal(text.match(/^#ONE_URL=/gm)?.length, 1, 'a shared variable is listed once');
  assert.match(text, /# ONE_URL \(above, for channel first\) is also its base_url\./);
  assert.match(text, /# Channel fixed \(profile p, channels\.yaml:10\): m4\n# \(names no variable: it serves as written\)/);
  assert.deepEqual(
    text.split('\n').filter((l) => l !== '' && !l.startsWith('#')),
    [],
  );
});
