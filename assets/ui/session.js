// Who is signed in. `GET /v1/session` answers for a session cookie or an API token, and
// answers a signed-out browser with 200 `signedIn: false` (no 401 in its console).
import { useEffect, useState } from "./lib.js";
import { get, post, apiToken, setApiToken, setCsrfToken, onUnauthorized, ApiError } from "./api.js";

const listeners = new Set();
let current = { status: "loading", me: null, error: null, notice: null };

function set(patch) {
  current = { ...current, ...patch };
  for (const fn of listeners) fn(current);
}

export function useSession() {
  const [s, setS] = useState(current);
  useEffect(() => {
    listeners.add(setS);
    setS(current);
    return () => listeners.delete(setS);
  }, []);
  return s;
}

export async function refreshSession() {
  try {
    const { signedIn, me } = await get("/v1/session");
    if (signedIn) {
      setCsrfToken(me.csrfToken);
      set({ status: "signed-in", me, error: null });
    } else {
      setApiToken(null);
      set({ status: "anonymous", me: null, error: null });
    }
  } catch (e) {
    set({ status: "error", error: e });
  }
}

export async function loginWithPassword(username, password) {
  const me = await post("/v1/auth/login", { username, password });
  setApiToken(null);
  setCsrfToken(me.csrfToken);
  set({ status: "signed-in", me, notice: null });
}

export async function loginWithToken(token) {
  setApiToken(token.trim());
  await refreshSession();
  if (current.status !== "signed-in") {
    throw new ApiError(401, "unauthorized", "The hub did not accept this API token.");
  }
}

export async function logout() {
  let providerLogout = null;
  if (current.me?.type === "user") {
    try {
      providerLogout = (await post("/v1/auth/logout"))?.providerLogoutUrl ?? null;
    } catch { /* the session is dropped below anyway */ }
  }
  setApiToken(null);
  setCsrfToken(null);
  // Signed in through the identity provider: its session ends too, and it sends the
  // browser back to /login.
  if (providerLogout) {
    location.assign(providerLogout);
    return;
  }
  set({ status: "anonymous", me: null, notice: "You are signed out." });
}

/** A fleet role at least `role`; unknown (no access API) counts as allowed, the API decides. */
export function hasRole(session, role) {
  if (!session.me) return true;
  const rank = { viewer: 1, editor: 2, admin: 3 };
  return (rank[session.me.role] ?? 0) >= rank[role];
}

onUnauthorized(() => {
  if (current.status === "signed-in") {
    setApiToken(null);
    set({ status: "anonymous", me: null, notice: "Your session ended. Sign in again." });
  }
});
