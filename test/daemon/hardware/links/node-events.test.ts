// The device_event bounds (media sizes, hrv range) and the legacy telemetry mapping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { base64DecodedBytes, checkDeviceEvent, legacyEvents, mediaBytes } from '../../../../daemon/hardware/links/node-events';
import { MEDIA_LIMITS } from '../../../../protocol/node';

void test('the decoded size of base64 is computed from its length, padding and data: URL prefix included', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      const b64 = Buffer.from(bytes).toString('base64');
      assert.equal(base64DecodedBytes(b64), bytes.length);
      assert.equal(base64DecodedBytes(`data:image/jpeg;base64,${b64}`), bytes.length);
    }),
  );
});

void test('media events over their limit are 4020; the largest of data/frame/audio counts; at the limit passes', () => {
  const limit = MEDIA_LIMITS.audio_frame!;
  const at = Buffer.alloc(limit).toString('base64');
  const over = Buffer.alloc(limit + 1).toString('base64');
  assert.equal(checkDeviceEvent({ event_type: 'audio_frame', data: { audio: at } }), null);
  const refused = checkDeviceEvent({ event_type: 'audio_frame', data: { data: 'AAAA', audio: over } });
  assert.equal(refused?.code, 4020);
  assert.equal(refused?.name, 'frame_too_large');
  assert.equal(mediaBytes({ event_type: 'video_frame', data: { frame: over, data: 'AA==' } }), limit + 1);
  // The same size is fine for a video frame (512 KiB) and for an event type without a limit.
  assert.equal(checkDeviceEvent({ event_type: 'video_frame', data: { frame: over } }), null);
  assert.equal(checkDeviceEvent({ event_type: 'heart_rate', data: { data: over } }), null);
});

void test('hrv outside 5–300 ms, or without a number, is 1003; inside passes', () => {
  for (const rmssd_ms of [5, 42.5, 300]) assert.equal(checkDeviceEvent({ event_type: 'hrv', data: { rmssd_ms } }), null);
  for (const rmssd_ms of [4.9, 301, -1, '40', null, undefined]) {
    const refused = checkDeviceEvent({ event_type: 'hrv', data: { rmssd_ms } });
    assert.equal(refused?.code, 1003, String(rmssd_ms));
  }
});

void test('telemetry {sensors}: one event per sensor; scalars become {value}; device_id is carried', () => {
  const { events, dropped } = legacyEvents({ type: 'telemetry', payload: { sensors: { temperature: { celsius: 21.5 }, steps: 1200 }, device_id: 'band' } }, 100);
  assert.deepEqual(events, [
    { event_type: 'temperature', data: { celsius: 21.5 }, ts: 100, device_id: 'band' },
    { event_type: 'steps', data: { value: 1200 }, ts: 100, device_id: 'band' },
  ]);
  assert.deepEqual(dropped, []);
});

void test('sensor_telemetry {sensor, data}: one event', () => {
  assert.deepEqual(legacyEvents({ type: 'sensor_telemetry', payload: { sensor: 'heart_rate', data: { bpm: 70 } } }, 5).events, [{ event_type: 'heart_rate', data: { bpm: 70 }, ts: 5 }]);
});

void test('sensor_batch {readings}: one event per reading, its own ts, nameless ones as telemetry, long names dropped', () => {
  const { events, dropped } = legacyEvents(
    {
      type: 'sensor_batch',
      payload: {
        readings: [
          { sensor: 'heart_rate', data: { bpm: 61 }, ts: 7 },
          { type: 'temperature', celsius: 20, ts: 8 },
          { lux: 300 },
          { sensor: 'x'.repeat(65), data: {} },
        ],
      },
    },
    9,
  );
  assert.deepEqual(events, [
    { event_type: 'heart_rate', data: { bpm: 61 }, ts: 7 },
    { event_type: 'temperature', data: { celsius: 20 }, ts: 8 },
    { event_type: 'telemetry', data: { lux: 300 }, ts: 9 },
  ]);
  assert.equal(dropped.length, 1);
});
