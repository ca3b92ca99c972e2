import { benchEntityIndex } from './entity-index'
const r = await benchEntityIndex()
console.log(r.embedder, r.dimensions, r.queries)
console.table(r.rows)
