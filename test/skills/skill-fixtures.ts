// A well-formed skill manifest with every trigger kind, shared by the manifest schema and loader tests.
export const goodManifest = {
  id: 'unit-convert',
  name: 'Unit conversion',
  version: '1.2.0-beta.1',
  description: 'Converts between units offline.',
  entry: 'main.js',
  params: { type: 'object', properties: { value: { type: 'number' } }, required: ['value'] },
  permissions: { network: { allow: ['api.example.com', '*.example.org'], private: false, http: false }, tools: ['memory_search'] },
  triggers: [{ type: 'manual' }, { type: 'schedule', cron: '0 7 * * *' }, { type: 'schedule', every_seconds: 60 }, { type: 'event', event: 'presence.arrived' }],
};
