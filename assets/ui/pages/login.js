// Sign in: through the company's identity provider when one is configured, with a
// username and password (session cookie), or with an API token kept for this tab.
import { html, useEffect, useState } from "../lib.js";
import { Field, fieldError } from "../components.js";
import { ApiError, get } from "../api.js";
import { loginWithPassword, loginWithToken } from "../session.js";
import { navigate } from "../router.js";

/** What went wrong signing in, in words (the API's code stays out of the way). */
function loginProblem(error, mode) {
  if (!(error instanceof ApiError)) return { title: "Could not sign in", text: error.message || String(error) };
  switch (error.status === 401 ? "invalid_credentials" : error.code) {
    case "invalid_credentials":
    case "unauthorized":
      return mode === "password"
        ? { title: "Wrong username or password", text: "Check both and try again. Passwords are case-sensitive." }
        : { title: "The hub did not accept this API token", text: "It may be mistyped, revoked or expired. Create one with kerf token create." };
    case "too_many_attempts": {
      const s = error.details?.retryAfterSeconds;
      return { title: "Too many attempts", text: `Sign-in is paused for this account${s ? `: try again in ${s} seconds` : "; try again later"}.` };
    }
    case "busy":
      return { title: "The hub is busy", text: "Too many sign-ins are being checked at once. Try again in a second." };
    case "network":
      return { title: "Cannot reach the kerf hub", text: "Check your connection, or whether the hub is running." };
    case "password_login_disabled":
      return { title: "Password sign-in is off", text: "Only break-glass accounts sign in with a password here. Use the identity provider's button above." };
    case "cross_site":
      return { title: "Sign-in refused", text: "The request did not come from this hub's own page. Open the hub's address directly." };
    default:
      return { title: "Could not sign in", text: `${error.message}${error.status ? ` (HTTP ${error.status})` : ""}` };
  }
}

/** Why a sign-in through the provider came back refused (`/login?sso_error=<code>`). */
export function ssoProblem(code, provider) {
  const who = provider || "the identity provider";
  const words = {
    provider_unreachable: ["Cannot reach " + who, `kerf could not reach ${who}. Try again shortly; if it persists, an administrator can check the hub's log and auth.oidc.issuer.`],
    provider_misconfigured: [`${who} is not set up correctly for kerf`, "The provider's answers are not what kerf expects. An administrator can run kerf config check --online and read the hub's log."],
    provider_refused: [`${who} did not sign you in`, "The provider refused or you cancelled. Try again, or ask your administrator for access to kerf."],
    invalid_id_token: ["The sign-in could not be verified", "The provider's ID token failed kerf's checks, so no session was opened. Try again; the hub's log says which check failed."],
    invalid_state: ["This sign-in link has expired or was already used", "Start again from this page."],
    other_browser: ["This sign-in was started in another browser or tab", "Start again from this page, in the browser you want to use."],
    missing_claim: ["The provider did not say who you are", "It sent no usable username. An administrator can check auth.oidc.username_claim."],
    no_mapped_group: ["You have no access to kerf", `None of your groups at ${who} gives a kerf role. Ask an administrator to add you to a mapped group.`],
    user_disabled: ["Your kerf account is disabled", "An administrator disabled it. Ask them to enable it."],
    username_taken: ["A local kerf account already has your username", "kerf does not hand a local account to the identity provider. Ask an administrator to rename or remove it."],
  }[code] ?? ["Could not sign in", `The sign-in through ${who} failed (${code}).`];
  return { title: words[0], text: words[1] };
}

export function LoginPage({ session }) {
  const [options, setOptions] = useState(null);
  useEffect(() => { get("/v1/auth/sign-in-options").then(setOptions, () => setOptions({ oidc: null, passwordLogin: "everyone" })); }, []);
  const params = new URLSearchParams(location.search);
  const ssoError = params.get("sso_error");
  const back = location.pathname === "/login" ? (params.get("next") || "/") : location.pathname + location.search;
  const [showPassword, setShowPassword] = useState(false);
  const breakGlass = options?.passwordLogin === "break-glass-only";
  const [mode, setMode] = useState("password");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [form, setForm] = useState({ username: "", password: "", token: "" });
  const onInput = (k) => (e) => setForm({ ...form, [k]: e.target.value });

  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (mode === "password") await loginWithPassword(form.username, form.password);
      else await loginWithToken(form.token);
      if (location.pathname === "/login") navigate(new URLSearchParams(location.search).get("next") || "/", { replace: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const generalError = error && !fieldError(error, "username") && !fieldError(error, "password") ? error : null;
  const sso = options?.oidc;
  const ssoTrouble = ssoError && ssoProblem(ssoError, sso?.name);
  const passwordForm = !breakGlass || showPassword;
  return html`<section class="card login">
    <h1>Sign in to kerf</h1>
    ${session.notice && html`<p class="notice" role="status">${session.notice}</p>`}
    ${ssoTrouble && html`<div class="state error login-error" role="alert" data-sso-error=${ssoError}>
      <strong>${ssoTrouble.title}</strong>
      <p class="msg">${ssoTrouble.text}</p>
    </div>`}
    ${sso && html`<div class="sso">
      <a class="button primary sso-login" href=${`${sso.loginUrl}?return=${encodeURIComponent(back)}`}>Sign in with ${sso.name}</a>
      ${breakGlass
        ? !showPassword && html`<button type="button" class="link" onClick=${() => setShowPassword(true)}>Break-glass sign-in (local administrators)</button>`
        : html`<p class="muted small or">or with a kerf account</p>`}
    </div>`}
    ${passwordForm && html`<form onSubmit=${submit} aria-label="Sign in">
      ${mode === "password"
        ? html`<${Field} id="username" label="Username" error=${fieldError(error, "username")}>
              <input id="username" name="username" autocomplete="username" required value=${form.username} onInput=${onInput("username")} />
            </${Field}>
            <${Field} id="password" label="Password" error=${fieldError(error, "password")}>
              <input id="password" name="password" type="password" autocomplete="current-password" required value=${form.password} onInput=${onInput("password")} />
            </${Field}>`
        : html`<${Field} id="token" label="API token" hint="Kept in this browser tab only, sent as a bearer token.">
              <input id="token" name="token" type="password" autocomplete="off" required placeholder="kerf_at_…" value=${form.token} onInput=${onInput("token")} />
            </${Field}>`}
      ${generalError && html`<div class="state error login-error" role="alert">
        <strong>${loginProblem(generalError, mode).title}</strong>
        <p class="msg">${loginProblem(generalError, mode).text}</p>
      </div>`}
      <div class="actions">
        <button type="submit" class=${sso ? "" : "primary"} disabled=${busy}>${busy ? "Signing in…" : "Sign in"}</button>
        <button type="button" class="link" onClick=${() => { setMode(mode === "password" ? "token" : "password"); setError(null); }}>
          ${mode === "password" ? "Use an API token instead" : "Use a username and password"}
        </button>
      </div>
    </form>`}
  </section>`;
}
