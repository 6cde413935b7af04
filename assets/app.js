// kerf web UI entry point: mounts the app shell into <body>.
import { html, render } from "./ui/lib.js";
import { App } from "./ui/shell.js";

const root = document.getElementById("root");
root.replaceChildren();
render(html`<${App} />`, root);
