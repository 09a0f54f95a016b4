/**
 * The console's task page shows what the result archive holds of a task (docs/archive.md,
 * docs/console.md): a real gateway with an archive in a directory, a video task of the simulator
 * copied, and its page in headless Chromium listing the archived file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { consoleSession } from '../helpers/console-session.js';
import { until } from '../helpers/until.js';

const archiveDir = mkdtempSync(join(tmpdir(), 'gw-console-archive-'));
after(() => rmSync(archiveDir, { recursive: true, force: true }));

describe('console: a task page shows its archived files', () => {
  const c = consoleSession({ GATEWAY_ARCHIVE: archiveDir });

  test('the Archive section lists the copied file with its size and type', async () => {
    const { json } = await c.admin('POST', '/admin/tokens', { group: 'default', name: 'archived' });
    const res = await fetch(`${c.base}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${json.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'epsilon-video-3', prompt: 'a harbour at night' }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const { id } = (await res.json()) as { id: string };
    const file = await until(
      'the copy',
      async () => ((await c.admin('GET', `/admin/tasks/${id}`)).json.archive?.files as { size: number; content_type: string }[] | undefined)?.[0],
      30_000,
    );
    const page = await c.open(`tasks?id=${id}`);
    const rows = page.locator('[data-testid="archive-files"] tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 1);
    const text = (await rows.first().textContent()) ?? '';
    assert.ok(text.includes(file.content_type), text);
    assert.match(text, /\d+(\.\d)? (B|KB|MB)/);
    await c.shot(page, 'task-archive');
    await page.close();
  });
});
