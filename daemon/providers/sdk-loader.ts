// The official LLM SDKs load on first use (kernel/lazy-module.ts says why). They are most of the
// brain's code (1.2 MB of @anthropic-ai/sdk and 0.4 MB of openai before minifying); esbuild puts each
// in a chunk of its own (build.mjs, splitting).
import type OpenAI from 'openai';
import type Anthropic from '@anthropic-ai/sdk';
import { lazyModule } from '../kernel/lazy-module';

export const loadOpenAi: () => Promise<typeof OpenAI> = lazyModule(() => import('openai').then((m) => m.default));

export const loadAnthropic: () => Promise<typeof Anthropic> = lazyModule(() => import('@anthropic-ai/sdk').then((m) => m.default));
