/** emotionWords / gazeWords: how the CLI summary and the console word a measurement's emotion and gaze. */
import { describe, expect, it } from 'vitest';
import { emotionWords, gazeWords } from '../src/index.js';

describe('emotion and gaze in words', () => {
  it('the dominant class with its mean share and the image count; the gaze in degrees', () => {
    expect(emotionWords({ probs: [0.02, 0, 0, 0.06, 0, 0.67, 0.25, 0], dominant: 'Neutral', samples: 104 })).toBe(
      'Neutral (67 %, 104 images)',
    );
    expect(emotionWords({ probs: [0, 0, 0, 0, 1, 0, 0, 0], dominant: 'Happiness', samples: 1 })).toBe(
      'Happiness (100 %, 1 image)',
    );
    expect(gazeWords({ meanYaw: -0.007, meanPitch: 0.023, unit: 'rad', samples: 103 })).toBe(
      'yaw -0.4°, pitch 1.3° (mean of 103 images)',
    );
  });

  it('leaves out what was not stored, and says nothing for what is not an aggregate', () => {
    expect(emotionWords({ probs: [0.1, 0, 0, 0, 0, 0.9, 0, 0], dominant: 'Neutral' })).toBe('Neutral (90 %)');
    expect(emotionWords({ dominant: 'Neutral' })).toBe('Neutral');
    expect(gazeWords({ meanYaw: 0, meanPitch: 0 })).toBe('yaw 0.0°, pitch 0.0°');
    for (const bad of [null, undefined, {}, 'Neutral', { dominant: '' }, { probs: [1] }])
      expect(emotionWords(bad)).toBeUndefined();
    for (const bad of [
      null,
      undefined,
      {},
      { meanYaw: 1 },
      { meanYaw: NaN, meanPitch: 0 },
      { meanYaw: '1', meanPitch: 0 },
    ])
      expect(gazeWords(bad)).toBeUndefined();
  });
});
