// Node colors by steps from the center (or from the best-connected entities): shared by the
// scene and the legend, so the legend never needs sigma to load.
export const RING_COLORS = ['#c2410c', '#2563eb', '#0d9488', '#7c3aed', '#64748b']
