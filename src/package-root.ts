// Where the package's own files are: the directory above this module, which is the repository
// root when run from source and the installed package's root when run from the bundle in lib/.
// It stays one level below the root so the same relative URL holds in both. A browser build never
// reads it (the app loads assets from its own URL), so Vite is told not to resolve it.

export const PACKAGE_ROOT = new URL(/* @vite-ignore */ '../', import.meta.url)

/** Shipped in the package (copied by `npm run build:lib`): the default model and the onnxruntime wasm runtime. */
export const ASSET_DIRS = {
  models: ['assets/models/', 'public/models/'],
  ort: ['assets/ort/'],
} as const
