// oidc-provider ships no types; the tests use its constructor and Koa-style callback only.
declare module 'oidc-provider' {
  // biome-ignore lint/suspicious/noExplicitAny: the module ships no types
  type Any = any;
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, Any>);
    callback(): (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;
    Grant: Any;
  }
}
