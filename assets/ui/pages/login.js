// Sign in: username and password (session cookie), or an API token kept for this tab.
import { html, useState } from "../lib.js";
import { Field, fieldError } from "../components.js";
import { ApiError } from "../api.js";
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
    case "cross_site":
      return { title: "Sign-in refused", text: "The request did not come from this hub's own page. Open the hub's address directly." };
    default:
      return { title: "Could not sign in", text: `${error.message}${error.status ? ` (HTTP ${error.status})` : ""}` };
  }
}

export function LoginPage({ session }) {
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
  return html`<section class="card login">
    <h1>Sign in to kerf</h1>
    ${session.notice && html`<p class="notice" role="status">${session.notice}</p>`}
    <form onSubmit=${submit} aria-label="Sign in">
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
        <button type="submit" class="primary" disabled=${busy}>${busy ? "Signing in…" : "Sign in"}</button>
        <button type="button" class="link" onClick=${() => { setMode(mode === "password" ? "token" : "password"); setError(null); }}>
          ${mode === "password" ? "Use an API token instead" : "Use a username and password"}
        </button>
      </div>
    </form>
  </section>`;
}
