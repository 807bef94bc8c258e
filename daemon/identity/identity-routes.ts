// /api/identity (spec 4.5, 2.11): USER.md, SOUL.md and the digital twin. PUT on SOUL.md is an
// addition to the spec's table, and so are the PATCHes that set single fields (the setup wizard sets the
// user's and the assistant's name and persona through them); docs/protocol.md documents them all.
import type { TypedRoutes } from '../http/route-kit';
import { IdentityFile, IdentityPut, Soul, SoulPatch, TwinAnswer, TwinProfile, TwinQuestion, UserPatch } from '../../protocol/identity';
import type { IdentityDocuments } from '../kernel/ports';
import type { DigitalTwin } from './digital-twin';
import { parseSoul, renderSoul, withUserName } from './identity-text';

export interface IdentityRouteDeps {
  files: IdentityDocuments;
  twin: DigitalTwin;
}

export const identityRoutes =
  (deps: IdentityRouteDeps): TypedRoutes =>
  async (app) => {
    const soul = () => {
      const file = deps.files.read('SOUL.md');
      return { ...file, ...parseSoul(file.content) };
    };

    app.get('/api/identity/user', { schema: { response: { 200: IdentityFile } } }, async () => deps.files.read('USER.md'));

    app.put('/api/identity/user', { schema: { body: IdentityPut, response: { 200: IdentityFile } } }, async (request) =>
      deps.files.write('USER.md', request.body.content, request.body.revision),
    );

    app.get('/api/identity/soul', { schema: { response: { 200: Soul } } }, async () => soul());

    app.put('/api/identity/soul', { schema: { body: IdentityPut, response: { 200: Soul } } }, async (request) => {
      deps.files.write('SOUL.md', request.body.content, request.body.revision);
      return soul();
    });

    app.patch('/api/identity/user', { schema: { body: UserPatch, response: { 200: IdentityFile } } }, async (request) => {
      const current = deps.files.read('USER.md');
      return deps.files.write('USER.md', withUserName(current.content, request.body.name), current.revision);
    });

    app.patch('/api/identity/soul', { schema: { body: SoulPatch, response: { 200: Soul } } }, async (request) => {
      const current = deps.files.read('SOUL.md');
      deps.files.write('SOUL.md', renderSoul({ ...parseSoul(current.content), ...request.body }), current.revision);
      return soul();
    });

    app.get('/api/identity/twin', { schema: { response: { 200: TwinProfile } } }, async () => deps.twin.profile());

    app.post('/api/identity/twin/ask', { schema: { body: TwinQuestion, response: { 200: TwinAnswer } } }, async (request) => deps.twin.ask(request.body.question));
  };
