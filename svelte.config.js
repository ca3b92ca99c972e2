// Svelte compiler options shared by the Vite plugin and editor tooling.
export default {
  compilerOptions: {
    // Cairn components use runes ($state, $derived, $props) only.
    runes: true,
  },
}
