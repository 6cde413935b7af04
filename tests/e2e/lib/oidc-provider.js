// A real OpenID Connect provider for the sign-in browser tests: `kerf-oidc-provider`
// (tests/oidc-provider; scripts/e2e.sh builds it and sets OIDC_PROVIDER_BIN), started
// on a free loopback port, ready when its --ready-file appears (it holds the issuer
// URL). Its control API registers clients and users, ends a user's sessions, rotates
// the signing key and arms a tampered ID token; `stop()` ends it and removes its files.
// The browser signs in on its login page: #username, #password, "Sign in".
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "./hub.js";

/** Starts a provider; resolves once it listens. */
export async function startOidcProvider() {
  const bin = process.env.OIDC_PROVIDER_BIN;
  if (!bin) throw new Error("OIDC_PROVIDER_BIN is not set: run the browser tests with scripts/e2e.sh (it builds the provider with scripts/ensure-oidc-provider.sh)");
  const dir = mkdtempSync(join(tmpdir(), "kerf-e2e-oidc-"));
  const readyFile = join(dir, "ready");
  const child = spawn(bin, ["--listen", "127.0.0.1:0", "--ready-file", readyFile], { stdio: ["ignore", "pipe", "pipe"] });
  let logs = "";
  child.stdout.on("data", (c) => { logs += c; });
  child.stderr.on("data", (c) => { logs += c; });
  const url = await until("the OIDC provider's ready file", 30_000, () => {
    if (child.exitCode !== null) throw new Error(`kerf-oidc-provider exited with ${child.exitCode}:\n${logs}`);
    // Written by rename: present means complete.
    return existsSync(readyFile) && readFileSync(readyFile, "utf8").trim();
  }, { every: 20 }).catch((e) => { child.kill("SIGKILL"); throw new Error(`${e.message}:\n${logs}`); });

  /** Calls /_control/PATH; throws on a non-2xx answer; resolves to the JSON answer. */
  const control = async (method, path, body) => {
    const res = await fetch(`${url}/_control/${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body ?? {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`OIDC provider control ${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };

  return {
    /** The issuer: http://127.0.0.1:PORT, no trailing slash. */
    url,
    /** Registers (or replaces) a confidential web client (client_secret_basic or _post). */
    putClient: (id, { secret, redirectUris, postLogoutRedirectUris = [] }) =>
      control("PUT", `clients/${encodeURIComponent(id)}`, { secret, redirectUris, postLogoutRedirectUris }),
    /** Creates or replaces a user (its sub stays u-<username>); resolves to { username, sub }. */
    putUser: (username, { password, email = "", name = "", groups = [], disabled = false }) =>
      control("PUT", `users/${encodeURIComponent(username)}`, { password, email, name, groups, disabled }),
    /** Revokes the user's tokens and browser sessions (next refresh: invalid_grant). */
    endSessions: (username) => control("POST", `users/${encodeURIComponent(username)}/end-sessions`),
    /** A fresh signing key; resolves to { activeKid, retiredKid }. */
    rotateKeys: ({ keepOld = false } = {}) => control("POST", "rotate-keys", { keepOld }),
    /** Flaws the next code exchange's ID token, once: wrong-aud, expired, no-nonce, wrong-iss, foreign-key, old-key. */
    tamperNext: (kind) => control("POST", "tamper-next", { kind }),
    logs: () => logs,
    /** Ends the provider and removes its files. */
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
