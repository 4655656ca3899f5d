// RUN: tc-opt %s --split-input-file -p 'register-tile{vector-width=8 rows=2 vectors=2 fma16=true}' | filecheck %s
// RUN: tc-opt %s --split-input-file -p 'register-tile{vector-width=8 rows=2 vectors=2}' | filecheck %s --check-prefix=EXACT

// fma16=true: a 16-bit product accumulating in f32 (what convert-tc-to-affine
// emits for `C(m, n) +=! A(m, r_k) * B(r_k, n)` with float16 or bfloat16
// inputs) becomes an f32 FMA of the extended factors. The rows of A, used
// only by the product, are copied once into an f32 buffer (here because
// the 64 columns are 4 strips of 2 x 8); B's vectors are extended in the
// kernel.
// CHECK-LABEL: func.func @mm16
// CHECK:       %[[ROWS:.*]] = memref.alloc() : memref<6x32x2xf32>
// CHECK:       affine.for %strip = 0 to 6 {
// CHECK:         affine.for %k = 0 to 32 {
// CHECK:           %[[A:.*]] = affine.load %A[%{{.*}}, %k] : memref<12x32xf16>
// CHECK-NEXT:      %[[AX:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK:           affine.store %[[AX]], %[[ROWS]][%strip, %k, %{{.*}}] : memref<6x32x2xf32>
// CHECK:       affine.for %k_1 = 0 to 32 iter_args
// CHECK:         %[[R:.*]] = affine.load %[[ROWS]][%{{.*}}, %k_1, %{{.*}}] : memref<6x32x2xf32>
// CHECK-NEXT:    %[[RB:.*]] = vector.broadcast %[[R]] : f32 to vector<8xf32>
// CHECK-NEXT:    %[[B:.*]] = vector.load %B[%k_1, %n] : memref<32x64xf16>, vector<8xf16>
// CHECK-NEXT:    %[[BX:.*]] = arith.extf %[[B]] : vector<8xf16> to vector<8xf32>
// CHECK-NEXT:    math.fma %[[RB]], %[[BX]], %{{.*}} fastmath<reassoc> : vector<8xf32>
// CHECK-NOT:     arith.mulf
// CHECK:       memref.dealloc %[[ROWS]] : memref<6x32x2xf32>

// Without fma16 the product keeps its rounding to f16: the kernel multiplies
// vectors of f16 and extends the product, with no copy.
// EXACT-LABEL: func.func @mm16
// EXACT-NOT:   memref.alloc
// EXACT:       %[[A:.*]] = vector.broadcast %{{.*}} : f16 to vector<8xf16>
// EXACT-NEXT:  %[[B:.*]] = vector.load %B[%k, %n] : memref<32x64xf16>, vector<8xf16>
// EXACT-NEXT:  %[[P:.*]] = arith.mulf %[[A]], %[[B]] : vector<8xf16>
// EXACT-NEXT:  %[[PX:.*]] = arith.extf %[[P]] : vector<8xf16> to vector<8xf32>
// EXACT-NEXT:  arith.addf %{{.*}}, %[[PX]] fastmath<reassoc> : vector<8xf32>
// EXACT-NOT:   math.fma
func.func @mm16(%A: memref<12x32xf16>, %B: memref<32x64xf16>, %C: memref<12x64xf32>) {
  affine.for %m = 0 to 12 {
    affine.for %n = 0 to 64 {
      affine.for %k = 0 to 32 {
        %a = affine.load %A[%m, %k] : memref<12x32xf16>
        %b = affine.load %B[%k, %n] : memref<32x64xf16>
        %p = arith.mulf %a, %b : f16
        %w = arith.extf %p : f16 to f32
        %c = affine.load %C[%m, %n] : memref<12x64xf32>
        %s = arith.addf %c, %w fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<12x64xf32>
      }
    }
  }
  func.return
}

// -----

// A kept output loop (%b) that the rows of A do not depend on: with fma16
// they are copied and extended once, before it, not once per batch (32
// columns alone, 2 strips, would not pay for a copy). The kernel reads f32.
// CHECK-LABEL: func.func @batched
// CHECK:       %[[ROWS:.*]] = memref.alloc() : memref<4x16x2xf32>
// CHECK:       arith.extf %{{.*}} : f16 to f32
// CHECK:       affine.for %b = 0 to 4 {
// CHECK:         affine.load %[[ROWS]][%{{.*}}, %k_1, %{{.*}}] : memref<4x16x2xf32>
// CHECK:         math.fma
// CHECK:       }
// CHECK:       memref.dealloc %[[ROWS]] : memref<4x16x2xf32>
// EXACT-LABEL: func.func @batched
// EXACT-NOT:   memref.alloc
// EXACT:       arith.mulf %{{.*}}, %{{.*}} : vector<8xf16>
func.func @batched(%A: memref<8x16xf16>, %B: memref<4x16x32xf16>, %C: memref<4x8x32xf32>) {
  affine.for %b = 0 to 4 {
    affine.for %m = 0 to 8 {
      affine.for %n = 0 to 32 {
        affine.for %k = 0 to 16 {
          %a = affine.load %A[%m, %k] : memref<8x16xf16>
          %x = affine.load %B[%b, %k, %n] : memref<4x16x32xf16>
          %p = arith.mulf %a, %x : f16
          %w = arith.extf %p : f16 to f32
          %c = affine.load %C[%b, %m, %n] : memref<4x8x32xf32>
          %s = arith.addf %c, %w fastmath<reassoc> : f32
          affine.store %s, %C[%b, %m, %n] : memref<4x8x32xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A `max` reduction of a 16-bit product is no contraction: the product keeps
// its rounding, on vectors of f16, with or without fma16.
// CHECK-LABEL: func.func @max16
// CHECK-NOT:   math.fma
// CHECK:       %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<8xf16>
// CHECK-NEXT:  %[[PX:.*]] = arith.extf %[[P]] : vector<8xf16> to vector<8xf32>
// CHECK-NEXT:  arith.maximumf %{{.*}}, %[[PX]] fastmath<reassoc> : vector<8xf32>
func.func @max16(%A: memref<4x32xf16>, %B: memref<32x16xf16>, %C: memref<4x16xf32>) {
  affine.for %m = 0 to 4 {
    affine.for %n = 0 to 16 {
      affine.for %k = 0 to 32 {
        %a = affine.load %A[%m, %k] : memref<4x32xf16>
        %b = affine.load %B[%k, %n] : memref<32x16xf16>
        %p = arith.mulf %a, %b : f16
        %w = arith.extf %p : f16 to f32
        %c = affine.load %C[%m, %n] : memref<4x16xf32>
        %s = arith.maximumf %c, %w fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<4x16xf32>
      }
    }
  }
  func.return
}

// -----

// Only the product's rounding is skipped: a factor computed in bfloat16
// (`A + B`) keeps its rounding and is extended as a vector; B, used by that
// sum too, is not copied.
// CHECK-LABEL: func.func @shared
// CHECK-NOT:   memref.alloc
// CHECK:       %[[B:.*]] = vector.load %B[%k, %n] : memref<32x64xbf16>, vector<8xbf16>
// CHECK-NEXT:  %[[BX:.*]] = arith.extf %[[B]] : vector<8xbf16> to vector<8xf32>
// CHECK:       %[[Q:.*]] = arith.addf %{{.*}}, %[[B]] : vector<8xbf16>
// CHECK-NEXT:  %[[QX:.*]] = arith.extf %[[Q]] : vector<8xbf16> to vector<8xf32>
// CHECK-NEXT:  math.fma %[[BX]], %[[QX]], %{{.*}} fastmath<reassoc> : vector<8xf32>
func.func @shared(%A: memref<4x32xbf16>, %B: memref<32x64xbf16>, %C: memref<4x64xf32>) {
  affine.for %m = 0 to 4 {
    affine.for %n = 0 to 64 {
      affine.for %k = 0 to 32 {
        %a = affine.load %A[%m, %k] : memref<4x32xbf16>
        %b = affine.load %B[%k, %n] : memref<32x64xbf16>
        %q = arith.addf %a, %b : bf16
        %p = arith.mulf %b, %q : bf16
        %w = arith.extf %p : bf16 to f32
        %c = affine.load %C[%m, %n] : memref<4x64xf32>
        %s = arith.addf %c, %w fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<4x64xf32>
      }
    }
  }
  func.return
}

// -----

// Integers extended into a wider accumulator are left alone (`arith.extsi`
// has no vector form in the pass).
// CHECK-LABEL: func.func @int16
// CHECK-NOT:   vector.
// CHECK:       %w = arith.extsi %p : i16 to i32
// CHECK-NEXT:  %c = affine.load %C[%m, %n] : memref<4x16xi32>
func.func @int16(%A: memref<4x32xi16>, %B: memref<32x16xi16>, %C: memref<4x16xi32>) {
  affine.for %m = 0 to 4 {
    affine.for %n = 0 to 16 {
      affine.for %k = 0 to 32 {
        %a = affine.load %A[%m, %k] : memref<4x32xi16>
        %b = affine.load %B[%k, %n] : memref<32x16xi16>
        %p = arith.muli %a, %b : i16
        %w = arith.extsi %p : i16 to i32
        %c = affine.load %C[%m, %n] : memref<4x16xi32>
        %s = arith.addi %c, %w : i32
        affine.store %s, %C[%m, %n] : memref<4x16xi32>
      }
    }
  }
  func.return
}
