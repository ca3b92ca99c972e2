// Builds small ONNX models in memory, so browser tests can exercise
// onnxruntime-web without any model file in the repository.
import onnxProto from 'onnx-proto'

const { onnx } = onnxProto

/** A float32 vector of symbolic length `n`. */
function vector(name: string): InstanceType<typeof onnx.ValueInfoProto> {
  return onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: {
        elemType: onnx.TensorProto.DataType.FLOAT,
        shape: { dim: [{ dimParam: 'n' }] },
      },
    },
  })
}

/** Inputs `a`, `b`; outputs `sum` = a + b and `product` = a * b, elementwise. */
export function addMulModel(): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'cairn-e2e',
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'add_mul',
      node: [
        { opType: 'Add', input: ['a', 'b'], output: ['sum'], name: 'add' },
        { opType: 'Mul', input: ['a', 'b'], output: ['product'], name: 'mul' },
      ],
      input: [vector('a'), vector('b')],
      output: [vector('sum'), vector('product')],
    },
  })
  return onnx.ModelProto.encode(model).finish()
}
