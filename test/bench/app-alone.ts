// `npx tsx test/bench/app-alone.ts [runs]`: the app benchmark (first-load JS, time to
// interactive cold and warm) by itself, as tables and JSON.
import { benchApp, printAppBench } from './app'

const runs = Number(process.argv[2]) || 3
const result = await benchApp(runs)
printAppBench(result)
console.log(JSON.stringify(result, null, 2))
