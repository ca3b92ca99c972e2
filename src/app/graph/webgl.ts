// Kept apart from scene.ts so a screen can ask without loading sigma and graphology.

/** Whether this browser can give sigma a WebGL context (headless Chromium does via SwiftShader). */
export function webglAvailable(): boolean {
  try {
    const c = document.createElement('canvas')
    return !!(c.getContext('webgl2') ?? c.getContext('webgl'))
  } catch {
    return false
  }
}
