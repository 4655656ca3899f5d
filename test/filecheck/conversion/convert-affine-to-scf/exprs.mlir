// RUN: tc-opt %s --split-input-file -p convert-affine-to-scf | filecheck %s

// Affine expressions in subscripts, affine.apply and affine.min expand into
// plain arith index ops: trivial exprs emit nothing, constants fold, `-e`
// terms become subtractions, floordiv/ceildiv/mod get floor semantics and
// no arith.floordivsi/ceildivsi is produced.

func.func @subscripts(%A: memref<?x?xf32>, %N: index, %i: index, %j: index) {
  %x = affine.load %A[%i, %j] : memref<?x?xf32>
  %y = affine.load %A[%i * 2 + 1, symbol(%N) - %j] : memref<?x?xf32>
  affine.store %x, %A[%i floordiv 2, %j mod 4] : memref<?x?xf32>
  affine.store %y, %A[-%i + 3, %i ceildiv 3] : memref<?x?xf32>
  affine.store %y, %A[5, 2 * 3 - 1] : memref<?x?xf32>
  func.return
}

// CHECK-LABEL: func.func @subscripts(%A: memref<?x?xf32>, %N: index, %i: index, %j: index)
// CHECK-NEXT:    %x = memref.load %A[%i, %j] : memref<?x?xf32>
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[M:.*]] = arith.muli %i, %[[C2]] : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[R0:.*]] = arith.addi %[[M]], %[[C1]] : index
// CHECK-NEXT:    %[[R1:.*]] = arith.subi %N, %j : index
// CHECK-NEXT:    %y = memref.load %A[%[[R0]], %[[R1]]] : memref<?x?xf32>
// i floordiv 2
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[NEG:.*]] = arith.cmpi slt, %i, %[[C0]] : index
// CHECK-NEXT:    %[[C1B:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[ADJ:.*]] = arith.subi %i, %[[C1B]] : index
// CHECK-NEXT:    %[[SEL:.*]] = arith.select %[[NEG]], %[[ADJ]], %i : index
// CHECK-NEXT:    %[[C2B:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[FD:.*]] = arith.divsi %[[SEL]], %[[C2B]] : index
// j mod 4
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[REM:.*]] = arith.remsi %j, %[[C4]] : index
// CHECK-NEXT:    %[[RNEG:.*]] = arith.cmpi slt, %[[REM]], %[[C0]] : index
// CHECK-NEXT:    %[[RADJ:.*]] = arith.addi %[[REM]], %[[C4]] : index
// CHECK-NEXT:    %[[MOD:.*]] = arith.select %[[RNEG]], %[[RADJ]], %[[REM]] : index
// CHECK-NEXT:    memref.store %x, %A[%[[FD]], %[[MOD]]] : memref<?x?xf32>
// 3 - i, i ceildiv 3
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[S:.*]] = arith.subi %[[C3]], %i : index
// CHECK-NEXT:    %[[C0B:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[POS:.*]] = arith.cmpi sgt, %i, %[[C0B]] : index
// CHECK-NEXT:    %[[C2C:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[CADJ:.*]] = arith.addi %i, %[[C2C]] : index
// CHECK-NEXT:    %[[CSEL:.*]] = arith.select %[[POS]], %[[CADJ]], %i : index
// CHECK-NEXT:    %[[CD:.*]] = arith.divsi %[[CSEL]], %[[C3]] : index
// CHECK-NEXT:    memref.store %y, %A[%[[S]], %[[CD]]] : memref<?x?xf32>
// constants fold
// CHECK-NEXT:    %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT:    memref.store %y, %A[%[[C5]], %[[C5]]] : memref<?x?xf32>
// CHECK-NEXT:    func.return
// CHECK-NOT:   floordivsi
// CHECK-NOT:   ceildivsi
// CHECK-NOT:   affine.

// -----

func.func @apply_min(%i: index, %N: index) -> (index, index, index, index) {
  %a = affine.apply affine_map<(d0) -> (d0)>(%i)
  %b = affine.apply affine_map<()[s0] -> (s0 * 4 - 2)>()[%N]
  %c = affine.apply affine_map<() -> (7)>()
  %d = affine.min affine_map<(d0)[s0] -> (d0 + 8, s0, 16)>(%i)[%N]
  func.return %a, %b, %c, %d : index, index, index, index
}

// CHECK-LABEL: func.func @apply_min(%i: index, %N: index)
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[M:.*]] = arith.muli %N, %[[C4]] : index
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[B:.*]] = arith.subi %[[M]], %[[C2]] : index
// CHECK-NEXT:    %[[C7:.*]] = arith.constant 7 : index
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[E:.*]] = arith.addi %i, %[[C8]] : index
// CHECK-NEXT:    %[[D0:.*]] = arith.minsi %[[E]], %N : index
// CHECK-NEXT:    %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT:    %[[D:.*]] = arith.minsi %[[D0]], %[[C16]] : index
// CHECK-NEXT:    func.return %i, %[[B]], %[[C7]], %[[D]] : index, index, index, index

// -----

// Negative divisors: x floordiv -c = (-x) floordiv c, x ceildiv -c =
// (-x) ceildiv c, x mod -c = -((-x) mod c).

func.func @negative_divisors(%i: index) -> (index, index, index) {
  %a = affine.apply affine_map<(d0) -> (d0 floordiv -3)>(%i)
  %b = affine.apply affine_map<(d0) -> (d0 ceildiv -3)>(%i)
  %c = affine.apply affine_map<(d0) -> (d0 mod -3)>(%i)
  func.return %a, %b, %c : index, index, index
}

// CHECK-LABEL: func.func @negative_divisors(%i: index)
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = arith.subi %[[Z]], %i : index
// CHECK-NEXT:    %{{.*}} = arith.cmpi slt, %[[N]], %[[Z]] : index
// CHECK:         %[[A:.*]] = arith.divsi
// CHECK:         %[[N2:.*]] = arith.subi %{{.*}}, %i : index
// CHECK-NEXT:    %{{.*}} = arith.cmpi sgt, %[[N2]], %{{.*}} : index
// CHECK:         %[[B:.*]] = arith.divsi
// CHECK:         %[[N3:.*]] = arith.subi %[[Z3:.*]], %i : index
// CHECK:         %[[R:.*]] = arith.remsi %[[N3]]
// CHECK:         %[[M:.*]] = arith.select
// CHECK-NEXT:    %[[C:.*]] = arith.subi %[[Z3]], %[[M]] : index
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]] : index, index, index
