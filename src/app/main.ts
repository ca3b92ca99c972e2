// Browser entry: mounts the Svelte shell and marks the document ready.
import { mount } from 'svelte'
import App from './App.svelte'
import { registerServiceWorker } from './pwa'

const target = document.getElementById('app')
if (!target) throw new Error('index.html must contain an element with id "app"')

mount(App, { target })
registerServiceWorker()
// End-to-end tests wait for this before interacting with the page.
document.documentElement.dataset.ready = 'true'
