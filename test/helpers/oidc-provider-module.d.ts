// The part of oidc-provider 8 the test provider uses (test/helpers/oidc-provider.ts): that
// version ships no declarations of its own.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface Client {
    clientId: string;
  }
  interface IdToken {
    set(key: string, value: unknown): void;
    issue(opts: { use: 'idtoken' }): Promise<string>;
  }
  export interface KoaContextWithOIDC {
    path: string;
    body: unknown;
    oidc: {
      provider: Provider;
      client?: Client;
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      result?: Record<string, { grantId?: string } | undefined>;
    };
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): void;
    Grant: {
      new (init: { clientId: string; accountId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
    Client: { find(id: string): Promise<Client | undefined> };
    IdToken: new (
      available: Record<string, unknown>,
      opts: { client: Client | undefined; ctx: KoaContextWithOIDC },
    ) => IdToken;
  }
}
