// `npx tsx test/bench/capture-alone.ts`: the capture measure of `npm run bench` on its own.
import { benchCapture, printCaptureBench } from './capture'

printCaptureBench(await benchCapture())
