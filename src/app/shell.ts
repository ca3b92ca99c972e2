// The Svelte shell, mounted once the entry has started the engine worker (main.ts).
import { mount } from 'svelte'
import App from './App.svelte'
import { registerServiceWorker } from './pwa'
import { engineAnswered } from './worker-link'

export function startShell(): void {
  const target = document.getElementById('app')
  if (!target) throw new Error('index.html must contain an element with id "app"')
  mount(App, { target })
  // The service worker's first install downloads ~20 MB (model, wasm runtime) to precache it:
  // it waits for the engine's first answer so it does not slow the worker's start, or a few
  // seconds if no screen has asked the engine anything.
  void Promise.race([engineAnswered(), new Promise((resolve) => setTimeout(resolve, 5_000))]).then(registerServiceWorker)
  // End-to-end tests wait for this before interacting with the page.
  document.documentElement.dataset.ready = 'true'
}
