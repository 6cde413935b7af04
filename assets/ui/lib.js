// The one module that imports the vendored libraries, so an upgrade touches one file.
import { h, render, Fragment } from "../vendor/preact-10.29.8.module.js";
import { useState, useEffect, useMemo, useRef, useCallback } from "../vendor/preact-hooks-10.29.8.module.js";
import htm from "../vendor/htm-3.1.1.module.js";

export const html = htm.bind(h);
export { h, render, Fragment, useState, useEffect, useMemo, useRef, useCallback };
