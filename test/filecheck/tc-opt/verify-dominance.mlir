// RUN: tc-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Every operand must be defined by an op or block argument that dominates
// its use (tcdialect.verifier; xDSL 0.74 printed such IR back unchanged).

// A use inside a loop of a value defined after the loop.
func.func @after_loop(%x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %y = arith.addf %z, %x : f32
  }
  %z = arith.addf %x, %x : f32
  func.return %z : f32
}

// CHECK:      %y = "arith.addf"(%z, %x)
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | operand #0 (%z) does not dominate this use

// -----

// A use before the definition in the same block.
func.func @same_block(%x: f32) -> f32 {
  %y = arith.mulf %z, %x : f32
  %z = arith.addf %x, %x : f32
  func.return %y : f32
}

// CHECK:      %y = "arith.mulf"(%z, %x)
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | operand #0 (%z) does not dominate this use

// -----

// A value of one branch of a diamond used where the branches join.
func.func @diamond(%c: i1, %x: f32) -> f32 {
  cf.cond_br %c, ^left, ^right
^left:
  %a = arith.addf %x, %x : f32
  cf.br ^join
^right:
  cf.br ^join
^join:
  func.return %a : f32
}

// CHECK:      "func.return"(%a)
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | operand #0 (%a) does not dominate this use

// -----

// A block argument used in another block that its block does not dominate.
func.func @block_argument(%c: i1, %x: f32) -> f32 {
  cf.cond_br %c, ^left(%x : f32), ^right
^left(%a: f32):
  cf.br ^right
^right:
  func.return %a : f32
}

// CHECK:      "func.return"(%a)
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | operand #0 (%a) does not dominate this use

// -----

// An op's result used inside the op's own region.
func.func @own_region(%x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (f32) {
    %y = arith.addf %acc, %r : f32
    scf.yield %y : f32
  }
  func.return %r : f32
}

// CHECK:      %y = "arith.addf"(%acc, %r)
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | operand #1 (%r) does not dominate this use

// -----

// Left alone: definitions that dominate their uses through a loop's back
// edge, the entry block, nested regions and an unreachable block (dominated
// by every block, as in MLIR).
func.func @valid(%c: i1, %x: f32) -> f32 {
  %z = arith.addf %x, %x : f32
  cf.br ^head(%z : f32)
^head(%a: f32):
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %a) -> (f32) {
    %y = arith.addf %acc, %z : f32
    scf.yield %y : f32
  }
  cf.cond_br %c, ^head(%s : f32), ^exit
^exit:
  func.return %s : f32
^dead:
  %w = arith.addf %s, %a : f32
  func.return %w : f32
}

// CHECK-LABEL: func.func @valid
// CHECK:         %s = scf.for
// CHECK:         cf.cond_br %c, ^{{.*}}(%s : f32), ^{{.*}}
// CHECK-NEXT:  ^{{.*}}:
// CHECK-NEXT:    func.return %s : f32
// CHECK-NEXT:  ^{{.*}}:
// CHECK-NEXT:    %w = arith.addf %s, %a : f32
// CHECK-NOT:   does not dominate
