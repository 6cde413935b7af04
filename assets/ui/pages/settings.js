// Settings: recommender and pricing, datasources, and (admin) users, tokens, teams and
// single sign-on.
import { html } from "../lib.js";
import { Tabs } from "../components.js";
import { hasRole } from "../session.js";
import { setQuery } from "../router.js";
import { RecommenderSettings, PricingSettings } from "./settings-recommender.js";
import { DatasourceSettings } from "./settings-datasources.js";
import { UsersSettings, TokensSettings, TeamsSettings } from "./settings-access.js";
import { SsoSettings } from "./settings-sso.js";

const TABS = [
  ["recommender", "Recommender", RecommenderSettings],
  ["pricing", "Pricing", PricingSettings],
  ["datasources", "Datasources", DatasourceSettings],
  ["users", "Users", UsersSettings],
  ["tokens", "API tokens", TokensSettings],
  ["teams", "Teams", TeamsSettings],
  ["sso", "Single sign-on", SsoSettings],
];

export function SettingsPage({ query, session }) {
  const tab = TABS.find(([id]) => id === query.get("tab")) ?? TABS[0];
  const Panel = tab[2];
  return html`<section>
    <div class="page-head"><h1>Settings</h1></div>
    ${!hasRole(session, "admin") && html`<p class="notice" role="note">Settings are managed by administrators; your role (${session.me?.role ?? "team roles only"}) may read nothing here. The hub's answer is shown below.</p>`}
    <${Tabs} label="Settings" current=${tab[0]} tabs=${TABS.map(([id, label]) => ({ id, label }))}
      onSelect=${(id) => setQuery({ tab: id === "recommender" ? null : id })} />
    <div role="tabpanel" aria-labelledby=${`tab-${tab[0]}`} class="card"><${Panel} key=${tab[0]} session=${session} /></div>
  </section>`;
}
