/**
 * A task id asked for on a route of another family (issue #40): the caller's own music task on the
 * video routes is still `task_not_found` (404), and the message says the id is a music task, not one
 * of this route's, naming a route that serves it; it once said "no task … for this API key", which
 * sent the caller looking at the key. Another key's task, and an id nobody has, still answer alike.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

describe('a task id on a route of another family', () => {
  let h: TaskHarness;
  let music: string;
  let gamma: string;

  before(async () => {
    h = await startTaskHarness({ finishMs: 50 });
    const a = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'a slow piano piece', title: 'Rain', tags: 'piano' });
    assert.equal(a.status, 200, a.text);
    music = a.json.data as string;
    const g = await h.post('/gamma?Action=CVSync2AsyncSubmitTask&Version=2022-08-31', {
      req_key: 'gamma-4.5',
      prompt: 'a red kite',
      width: 2048,
      height: 2048,
    });
    assert.equal(g.status, 200, g.text);
    gamma = g.json.data.task_id as string;
  });
  after(() => h?.close());

  test("the caller's own task of another family is named as such, with a route that serves it", async () => {
    const query = await h.get(`/v1/videos/${music}`);
    assert.equal(query.status, 404, query.text);
    assert.equal(query.json.error.code, 'task_not_found');
    assert.equal(query.json.error.param, 'task_id');
    assert.equal(query.json.error.message, `task "${music}" is an audio task, not one of this route's (it serves video tasks); GET /iota/fetch/{id} serves it`);
    assert.doesNotMatch(query.json.error.message, /API key/);
    // A download is pointed at a download route of the task's family.
    const download = await h.get(`/v1/videos/${gamma}/content`);
    assert.equal(download.status, 404, download.text);
    assert.equal(download.json.error.code, 'task_not_found');
    assert.match(
      download.json.error.message,
      /is a gamma task, not one of this route's \(it serves video tasks\); GET \/gamma\/content\/\{task_id\} serves it$/,
    );
    // gamma's GetResult is a query with the id in the body.
    const iota = await h.get(`/iota/fetch/${gamma}`);
    assert.equal(iota.status, 404, iota.text);
    assert.match(iota.json.error.message, /; POST \/gamma\?Action=CVSync2AsyncGetResult&Version=2022-08-31 serves it$/);
  });

  test("another key's task answers exactly like an id nobody has", async () => {
    const other = await h.createKey();
    const theirs = await h.get(`/v1/videos/${music}`, { authorization: `Bearer ${other}` });
    const nobody = 'task_nosuchtask0000000000000000';
    const none = await h.get(`/v1/videos/${nobody}`, { authorization: `Bearer ${other}` });
    assert.equal(theirs.status, 404);
    assert.equal(none.status, 404);
    assert.equal(theirs.json.error.message.replace(music, nobody), none.json.error.message);
    assert.equal(none.json.error.message, `no video task "${nobody}" was found for this API key`);
  });
});
