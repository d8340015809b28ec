;; A face crop straight from an I420 frame, with WebAssembly SIMD (yuv-crop.ts loads it; `npm run
;; build:wasm` assembles it into yuv-crop-wasm.ts, and a test checks the two agree).
;;
;; crop(y, u, v, w, h, row0, cx0, cx1, xs, ys, acc, out, yc, vr, ug, vg, ub): the 36x36 RGB crop that
;; protocol's `cropResizeRgb` makes of the frame's RGB (yuv.ts `i420ToRgbRegion`), bit for bit,
;; without the RGB frame. Each output pixel is the rounded mean of the source pixels of its span
;; (xs and ys: 36 [start, end) pairs of i32 each, in frame coordinates; coordinates outside the frame
;; read the edge pixel, as the crop does). The planes hold the frame's rows from `row0` (Y at `y`,
;; `w` bytes a row; U and V at `u` and `v`, w/2 bytes a row, from chroma row row0/2); only columns
;; [cx0, cx1) are converted (cx0 a multiple of 8, cx1 - cx0 too; the clamped spans lie inside).
;;
;; Per output row: every source row of its span is converted, eight pixels a step, as libswscale's
;; yuv420p→rgb24 does and i420ToRgbRegion copies (samples promoted by 3 bits, `pmulhw` as a 32-bit
;; product shifted right by 16, chroma shared by each 2x2 block, the sum clamped to 0..255), and
;; added to 32-bit column sums (R, G, B planes at `acc`, 4·(cx1-cx0) bytes each); then each output
;; pixel adds its span's columns and divides: the same integer sums and the same f64 division and
;; rounding (floor(s/n + 0.5), which is Math.round for these non-negative quotients) as the crop.
(module
  (memory (export "memory") 4)
  (func (export "crop") (param $y i32) (param $u i32) (param $v i32) (param $w i32) (param $h i32)
    (param $row0 i32) (param $cx0 i32) (param $cx1 i32) (param $xs i32) (param $ys i32) (param $acc i32)
    (param $out i32) (param $yc i32) (param $vr i32) (param $ug i32) (param $vg i32) (param $ub i32)
    (local $oy i32) (local $ox i32) (local $a i32) (local $b i32) (local $sy i32) (local $cy i32)
    (local $x i32) (local $x0 i32) (local $x1 i32) (local $cx i32) (local $n i32) (local $plane i32)
    (local $yrow i32) (local $urow i32) (local $vrow i32) (local $p i32) (local $o i32)
    (local $sr i32) (local $sg i32) (local $sb i32) (local $o2 i32) (local $o3 i32) (local $wm i32) (local $nf f64)
    (local $YC v128) (local $VR v128) (local $UG v128) (local $VG v128) (local $UB v128) (local $dup v128)
    (local $Y v128) (local $t v128) (local $K0 v128) (local $K255 v128) (local $K128 v128) (local $K1024 v128) (local $cu v128) (local $cv v128) (local $r v128) (local $g v128) (local $bl v128)
    (local.set $K0 (v128.const i16x8 0 0 0 0 0 0 0 0))
    (local.set $K255 (i16x8.splat (i32.const 255)))
    (local.set $K128 (i16x8.splat (i32.const 128)))
    (local.set $K1024 (i16x8.splat (i32.const 1024)))
    (local.set $YC (i16x8.splat (local.get $yc)))
    (local.set $VR (i16x8.splat (local.get $vr)))
    (local.set $UG (i16x8.splat (local.get $ug)))
    (local.set $VG (i16x8.splat (local.get $vg)))
    (local.set $UB (i16x8.splat (local.get $ub)))
    ;; each of the four chroma terms to the two pixels that share it (i16 lanes 0 0 1 1 2 2 3 3)
    (local.set $dup (v128.const i8x16 0 1 0 1 2 3 2 3 4 5 4 5 6 7 6 7))
    (local.set $wm (i32.sub (local.get $w) (i32.const 1)))
    (local.set $plane (i32.shl (i32.sub (local.get $cx1) (local.get $cx0)) (i32.const 2)))
    (loop $rows
      (local.set $a (i32.load (i32.add (local.get $ys) (i32.shl (local.get $oy) (i32.const 3)))))
      (local.set $b (i32.load offset=4 (i32.add (local.get $ys) (i32.shl (local.get $oy) (i32.const 3)))))
      (memory.fill (local.get $acc) (i32.const 0) (i32.mul (local.get $plane) (i32.const 3)))
      ;; the span's rows into the column sums
      (local.set $sy (local.get $a))
      (loop $span
        (local.set $cy (call $clamp (local.get $sy) (i32.sub (local.get $h) (i32.const 1))))
        (local.set $yrow (i32.add (local.get $y) (i32.mul (i32.sub (local.get $cy) (local.get $row0)) (local.get $w))))
        (local.set $p (i32.mul (i32.sub (i32.shr_u (local.get $cy) (i32.const 1)) (i32.shr_u (local.get $row0) (i32.const 1)))
          (i32.shr_u (local.get $w) (i32.const 1))))
        (local.set $urow (i32.add (local.get $u) (local.get $p)))
        (local.set $vrow (i32.add (local.get $v) (local.get $p)))
        (local.set $x (local.get $cx0))
        (local.set $o (local.get $acc))
        (local.set $o2 (i32.add (local.get $acc) (local.get $plane)))
        (local.set $o3 (i32.add (local.get $o2) (local.get $plane)))
        (loop $cols
          (local.set $Y (i16x8.extend_low_i8x16_u (v128.load64_zero (i32.add (local.get $yrow) (local.get $x)))))
          (local.set $Y (i16x8.sub (i16x8.shl (local.get $Y) (i32.const 3)) (local.get $K128)))
          (local.set $Y (i16x8.narrow_i32x4_s
              (i32x4.shr_s (i32x4.extmul_low_i16x8_s (local.get $Y) (local.get $YC)) (i32.const 16))
              (i32x4.shr_s (i32x4.extmul_high_i16x8_s (local.get $Y) (local.get $YC)) (i32.const 16))))
          (local.set $p (i32.shr_u (local.get $x) (i32.const 1)))
          (local.set $cu (i16x8.sub (i16x8.shl (i16x8.extend_low_i8x16_u (v128.load32_zero (i32.add (local.get $urow) (local.get $p))))
            (i32.const 3)) (local.get $K1024)))
          (local.set $cv (i16x8.sub (i16x8.shl (i16x8.extend_low_i8x16_u (v128.load32_zero (i32.add (local.get $vrow) (local.get $p))))
            (i32.const 3)) (local.get $K1024)))
          ;; the chroma terms: only lanes 0..3 hold samples (the rest are dropped by the swizzle)
          (local.set $r (i8x16.swizzle (i16x8.narrow_i32x4_s
              (i32x4.shr_s (i32x4.extmul_low_i16x8_s (local.get $cv) (local.get $VR)) (i32.const 16))
              (i32x4.shr_s (i32x4.extmul_high_i16x8_s (local.get $cv) (local.get $VR)) (i32.const 16))) (local.get $dup)))
          (local.set $g (i8x16.swizzle (i16x8.add
            (i16x8.narrow_i32x4_s
              (i32x4.shr_s (i32x4.extmul_low_i16x8_s (local.get $cu) (local.get $UG)) (i32.const 16))
              (i32x4.shr_s (i32x4.extmul_high_i16x8_s (local.get $cu) (local.get $UG)) (i32.const 16)))
            (i16x8.narrow_i32x4_s
              (i32x4.shr_s (i32x4.extmul_low_i16x8_s (local.get $cv) (local.get $VG)) (i32.const 16))
              (i32x4.shr_s (i32x4.extmul_high_i16x8_s (local.get $cv) (local.get $VG)) (i32.const 16)))) (local.get $dup)))
          (local.set $bl (i8x16.swizzle (i16x8.narrow_i32x4_s
              (i32x4.shr_s (i32x4.extmul_low_i16x8_s (local.get $cu) (local.get $UB)) (i32.const 16))
              (i32x4.shr_s (i32x4.extmul_high_i16x8_s (local.get $cu) (local.get $UB)) (i32.const 16))) (local.get $dup)))
          (local.set $t (i16x8.min_s (i16x8.max_s (i16x8.add (local.get $Y) (local.get $r)) (local.get $K0)) (local.get $K255)))
          (v128.store (local.get $o) (i32x4.add (v128.load (local.get $o)) (i32x4.extend_low_i16x8_u (local.get $t))))
          (v128.store offset=16 (local.get $o) (i32x4.add (v128.load offset=16 (local.get $o)) (i32x4.extend_high_i16x8_u (local.get $t))))
          (local.set $t (i16x8.min_s (i16x8.max_s (i16x8.add (local.get $Y) (local.get $g)) (local.get $K0)) (local.get $K255)))
          (v128.store (local.get $o2) (i32x4.add (v128.load (local.get $o2)) (i32x4.extend_low_i16x8_u (local.get $t))))
          (v128.store offset=16 (local.get $o2) (i32x4.add (v128.load offset=16 (local.get $o2)) (i32x4.extend_high_i16x8_u (local.get $t))))
          (local.set $t (i16x8.min_s (i16x8.max_s (i16x8.add (local.get $Y) (local.get $bl)) (local.get $K0)) (local.get $K255)))
          (v128.store (local.get $o3) (i32x4.add (v128.load (local.get $o3)) (i32x4.extend_low_i16x8_u (local.get $t))))
          (v128.store offset=16 (local.get $o3) (i32x4.add (v128.load offset=16 (local.get $o3)) (i32x4.extend_high_i16x8_u (local.get $t))))
          (local.set $o2 (i32.add (local.get $o2) (i32.const 32)))
          (local.set $o3 (i32.add (local.get $o3) (i32.const 32)))
          (local.set $o (i32.add (local.get $o) (i32.const 32)))
          (local.set $x (i32.add (local.get $x) (i32.const 8)))
          (br_if $cols (i32.lt_s (local.get $x) (local.get $cx1))))
        (local.set $sy (i32.add (local.get $sy) (i32.const 1)))
        (br_if $span (i32.lt_s (local.get $sy) (local.get $b))))
      ;; each output pixel of the row: its span's column sums, then the mean
      (local.set $ox (i32.const 0))
      (loop $pixels
        (local.set $x0 (i32.load (i32.add (local.get $xs) (i32.shl (local.get $ox) (i32.const 3)))))
        (local.set $x1 (i32.load offset=4 (i32.add (local.get $xs) (i32.shl (local.get $ox) (i32.const 3)))))
        (local.set $sr (i32.const 0))
        (local.set $sg (i32.const 0))
        (local.set $sb (i32.const 0))
        (local.set $x (local.get $x0))
        (loop $sum
          (local.set $cx (i32.add (local.get $acc)
            (i32.shl (i32.sub
              (select (i32.const 0) (select (local.get $wm) (local.get $x) (i32.gt_s (local.get $x) (local.get $wm)))
                (i32.lt_s (local.get $x) (i32.const 0)))
              (local.get $cx0)) (i32.const 2))))
          (local.set $sr (i32.add (local.get $sr) (i32.load (local.get $cx))))
          (local.set $sg (i32.add (local.get $sg) (i32.load (i32.add (local.get $cx) (local.get $plane)))))
          (local.set $sb (i32.add (local.get $sb) (i32.load (i32.add (local.get $cx) (i32.shl (local.get $plane) (i32.const 1))))))
          (local.set $x (i32.add (local.get $x) (i32.const 1)))
          (br_if $sum (i32.lt_s (local.get $x) (local.get $x1))))
        (local.set $n (i32.mul (i32.sub (local.get $b) (local.get $a)) (i32.sub (local.get $x1) (local.get $x0))))
        (local.set $o (i32.add (local.get $out) (i32.mul (i32.add (i32.mul (local.get $oy) (i32.const 36)) (local.get $ox)) (i32.const 3))))
        (local.set $nf (f64.convert_i32_u (local.get $n)))
        (i32.store8 (local.get $o) (i32.trunc_f64_u (f64.floor (f64.add (f64.div (f64.convert_i32_u (local.get $sr)) (local.get $nf)) (f64.const 0.5)))))
        (i32.store8 offset=1 (local.get $o) (i32.trunc_f64_u (f64.floor (f64.add (f64.div (f64.convert_i32_u (local.get $sg)) (local.get $nf)) (f64.const 0.5)))))
        (i32.store8 offset=2 (local.get $o) (i32.trunc_f64_u (f64.floor (f64.add (f64.div (f64.convert_i32_u (local.get $sb)) (local.get $nf)) (f64.const 0.5)))))
        (local.set $ox (i32.add (local.get $ox) (i32.const 1)))
        (br_if $pixels (i32.lt_u (local.get $ox) (i32.const 36))))
      (local.set $oy (i32.add (local.get $oy) (i32.const 1)))
      (br_if $rows (i32.lt_u (local.get $oy) (i32.const 36)))))
  ;; v clamped to 0..hi.
  (func $clamp (param $v i32) (param $hi i32) (result i32)
    (select (i32.const 0) (select (local.get $hi) (local.get $v) (i32.gt_s (local.get $v) (local.get $hi))) (i32.lt_s (local.get $v) (i32.const 0)))))
