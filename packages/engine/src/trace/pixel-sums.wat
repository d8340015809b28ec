;; The skin trace's per-pixel loops in WebAssembly (pixel-sums.ts loads it; `npm run build:wasm`
;; assembles it into pixel-sums-wasm.ts, and a test checks the two agree): `sums`, weighted channel
;; sums of an interleaved RGB crop with SIMD, and `refresh`, the skin model's refresh (scalar f64).
;;
;; sums(pix, w, groups, out): for the first 8·groups pixels at byte offset `pix` (RGB, 3 bytes a
;; pixel) and their unsigned 16-bit weights at `w` (at most 32767 each), writes to `out` four f64:
;; Σ w·R, Σ w·G, Σ w·B, Σ w, and a fifth: the largest byte of the pixels read. Every product and sum
;; is an integer, so the figures are exact whatever the order of the additions: they equal, bit for
;; bit, the plain scalar loop of pixel-sums.ts. At most 256 groups (2048 pixels); the caller checks.
;;
;; Eight pixels a group: the 24 pixel bytes are split by channel (one shuffle each), widened to
;; i16x8 and multiplied by the eight weights with i32x4.dot_i16x8_s, which adds neighbouring
;; products: each lane gains at most 2·32767·255 < 2^24 a group, so 256 groups stay below 2^32 and
;; the lanes are read as unsigned 32-bit integers.
(module
  (memory (export "memory") 1)
  ;; Byte-selection masks for i8x16.swizzle, read from memory at the start of each call so that they
  ;; stay in registers (a constant shuffle is rebuilt in every iteration by some engines): for each
  ;; channel, where its eight bytes go in i16 lanes (low byte; the high byte and every index ≥ 16
  ;; select zero) from the group's first 16 bytes (P), then from its bytes 8..23 (Q).
  (data (i32.const 65280)
    "\00\80\03\80\06\80\09\80\0c\80\0f\80\80\80\80\80"
    "\80\80\80\80\80\80\80\80\80\80\80\80\0a\80\0d\80"
    "\01\80\04\80\07\80\0a\80\0d\80\80\80\80\80\80\80"
    "\80\80\80\80\80\80\80\80\80\80\08\80\0b\80\0e\80"
    "\02\80\05\80\08\80\0b\80\0e\80\80\80\80\80\80\80"
    "\80\80\80\80\80\80\80\80\80\80\09\80\0c\80\0f\80")
  (func (export "sums") (param $pix i32) (param $w i32) (param $groups i32) (param $out i32)
    (local $i i32)
    (local $W v128) (local $P v128) (local $Q v128)
    (local $rp v128) (local $rq v128) (local $gp v128) (local $gq v128) (local $bp v128) (local $bq v128)
    (local $r v128) (local $g v128) (local $b v128) (local $ws v128) (local $mx v128)
    (local.set $rp (v128.load (i32.const 65280)))
    (local.set $rq (v128.load (i32.const 65296)))
    (local.set $gp (v128.load (i32.const 65312)))
    (local.set $gq (v128.load (i32.const 65328)))
    (local.set $bp (v128.load (i32.const 65344)))
    (local.set $bq (v128.load (i32.const 65360)))
    (block $done
      (loop $group
        (br_if $done (i32.ge_u (local.get $i) (local.get $groups)))
        (local.set $W (v128.load (local.get $w)))
        (local.set $P (v128.load (local.get $pix)))
        (local.set $Q (v128.load offset=8 (local.get $pix)))
        (local.set $mx (i8x16.max_u (local.get $mx) (i8x16.max_u (local.get $P) (local.get $Q))))
        (local.set $r (i32x4.add (local.get $r) (i32x4.dot_i16x8_s (local.get $W)
          (v128.or (i8x16.swizzle (local.get $P) (local.get $rp)) (i8x16.swizzle (local.get $Q) (local.get $rq))))))
        (local.set $g (i32x4.add (local.get $g) (i32x4.dot_i16x8_s (local.get $W)
          (v128.or (i8x16.swizzle (local.get $P) (local.get $gp)) (i8x16.swizzle (local.get $Q) (local.get $gq))))))
        (local.set $b (i32x4.add (local.get $b) (i32x4.dot_i16x8_s (local.get $W)
          (v128.or (i8x16.swizzle (local.get $P) (local.get $bp)) (i8x16.swizzle (local.get $Q) (local.get $bq))))))
        (local.set $ws (i32x4.add (local.get $ws) (i32x4.extadd_pairwise_i16x8_u (local.get $W))))
        (local.set $pix (i32.add (local.get $pix) (i32.const 24)))
        (local.set $w (i32.add (local.get $w) (i32.const 16)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $group)))
    (f64.store offset=0 (local.get $out) (call $lanes (local.get $r)))
    (f64.store offset=8 (local.get $out) (call $lanes (local.get $g)))
    (f64.store offset=16 (local.get $out) (call $lanes (local.get $b)))
    (f64.store offset=24 (local.get $out) (call $lanes (local.get $ws)))
    ;; The largest byte: fold the 16 lanes' maxima by halves.
    (local.set $mx (i8x16.max_u (local.get $mx) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 0 0 0 0 0 0 0 (local.get $mx) (local.get $mx))))
    (local.set $mx (i8x16.max_u (local.get $mx) (i8x16.shuffle 4 5 6 7 0 0 0 0 0 0 0 0 0 0 0 0 (local.get $mx) (local.get $mx))))
    (local.set $mx (i8x16.max_u (local.get $mx) (i8x16.shuffle 2 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 (local.get $mx) (local.get $mx))))
    (local.set $mx (i8x16.max_u (local.get $mx) (i8x16.shuffle 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 (local.get $mx) (local.get $mx))))
    (f64.store offset=32 (local.get $out) (f64.convert_i32_u (i8x16.extract_lane_u 0 (local.get $mx)))))
  ;; refresh(q0, q1, img, pix, w, slotByte, slotCrop, slotPrior, refR, refG, refLuma, lo, hi, invR2, out):
  ;; the skin model's refresh of refresh slots [q0, q1) (skin-trace.ts, whose JavaScript loop this is,
  ;; operation for operation in f64, so the results are the same bit for bit): each slot's smoothed
  ;; pixel (f32 at img + 12·(q − q0)) moves halfway to the crop's, its skin weight is recomputed and
  ;; stored as an integer (at w + 2·slotCrop[q]), and the weighted chromaticity and luma sums of the
  ;; refreshed pixels go to out (four f64: Σw, Σw·r, Σw·g, Σw·sum/3). lo and hi bound the sums where
  ;; the luminance gate is certainly 1.
  (func (export "refresh") (param $q i32) (param $q1 i32) (param $img i32) (param $pix i32) (param $w i32)
    (param $slotByte i32) (param $slotCrop i32) (param $slotPrior i32)
    (param $refR f64) (param $refG f64) (param $refLuma f64) (param $lo f64) (param $hi f64) (param $invR2 f64)
    (param $out i32)
    (local $j i32) (local $R f64) (local $G f64) (local $B f64) (local $sum f64) (local $inv f64)
    (local $cr f64) (local $cg f64) (local $dr f64) (local $dg f64) (local $kc f64) (local $wi f64) (local $pk f64)
    (local $rs f64) (local $rr f64) (local $rg f64) (local $ry f64)
    (block $done
      (loop $slot
        (br_if $done (i32.ge_u (local.get $q) (local.get $q1)))
        (local.set $j (i32.add (local.get $pix) (i32.load (i32.add (local.get $slotByte) (i32.shl (local.get $q) (i32.const 2))))))
        (local.set $R (f64.promote_f32 (f32.load offset=0 (local.get $img))))
        (local.set $R (f64.add (local.get $R) (f64.mul (f64.const 0.5)
          (f64.sub (f64.convert_i32_u (i32.load8_u offset=0 (local.get $j))) (local.get $R)))))
        (f32.store offset=0 (local.get $img) (f32.demote_f64 (local.get $R)))
        (local.set $G (f64.promote_f32 (f32.load offset=4 (local.get $img))))
        (local.set $G (f64.add (local.get $G) (f64.mul (f64.const 0.5)
          (f64.sub (f64.convert_i32_u (i32.load8_u offset=1 (local.get $j))) (local.get $G)))))
        (f32.store offset=4 (local.get $img) (f32.demote_f64 (local.get $G)))
        (local.set $B (f64.promote_f32 (f32.load offset=8 (local.get $img))))
        (local.set $B (f64.add (local.get $B) (f64.mul (f64.const 0.5)
          (f64.sub (f64.convert_i32_u (i32.load8_u offset=2 (local.get $j))) (local.get $B)))))
        (f32.store offset=8 (local.get $img) (f32.demote_f64 (local.get $B)))
        (local.set $wi (f64.const 0))
        (if (i32.and (i32.and (f64.lt (local.get $R) (f64.const 253.5)) (f64.lt (local.get $G) (f64.const 253.5)))
                     (f64.lt (local.get $B) (f64.const 253.5)))
          (then
            (local.set $sum (f64.add (f64.add (f64.add (local.get $R) (local.get $G)) (local.get $B)) (f64.const 1)))
            (local.set $inv (f64.div (f64.const 1) (local.get $sum)))
            (local.set $cr (f64.mul (local.get $R) (local.get $inv)))
            (local.set $cg (f64.mul (local.get $G) (local.get $inv)))
            (local.set $dr (f64.sub (local.get $cr) (local.get $refR)))
            (local.set $dg (f64.sub (local.get $cg) (local.get $refG)))
            (local.set $kc (f64.sub (f64.const 1) (f64.mul
              (f64.add (f64.mul (local.get $dr) (local.get $dr)) (f64.mul (local.get $dg) (local.get $dg)))
              (local.get $invR2))))
            (if (f64.gt (local.get $kc) (f64.const 0))
              (then
                (local.set $pk (f64.mul
                  (f64.promote_f32 (f32.load (i32.add (local.get $slotPrior) (i32.shl (local.get $q) (i32.const 2)))))
                  (local.get $kc)))
                (local.set $wi
                  (if (result f64) (i32.and (f64.ge (local.get $sum) (local.get $lo)) (f64.le (local.get $sum) (local.get $hi)))
                    (then (local.get $pk))
                    (else (f64.mul (local.get $pk)
                      (call $lumaGate (f64.div (local.get $sum) (f64.const 3)) (local.get $refLuma))))))
                (local.set $rs (f64.add (local.get $rs) (local.get $wi)))
                (local.set $rr (f64.add (local.get $rr) (f64.mul (local.get $wi) (local.get $cr))))
                (local.set $rg (f64.add (local.get $rg) (f64.mul (local.get $wi) (local.get $cg))))
                (local.set $ry (f64.add (local.get $ry)
                  (f64.div (f64.mul (local.get $wi) (local.get $sum)) (f64.const 3))))))))
        (i32.store16
          (i32.add (local.get $w) (i32.shl (i32.load (i32.add (local.get $slotCrop) (i32.shl (local.get $q) (i32.const 2)))) (i32.const 1)))
          (i32.trunc_f64_s (f64.add (f64.mul (local.get $wi) (f64.const 32767)) (f64.const 0.5))))
        (local.set $img (i32.add (local.get $img) (i32.const 12)))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $slot)))
    (f64.store offset=0 (local.get $out) (local.get $rs))
    (f64.store offset=8 (local.get $out) (local.get $rr))
    (f64.store offset=16 (local.get $out) (local.get $rg))
    (f64.store offset=24 (local.get $out) (local.get $ry)))
  ;; skin-trace.ts's lumaGate: 1 on the plateau, ramps to 0 towards too dark and too bright.
  (func $lumaGate (param $luma f64) (param $ref f64) (result f64)
    (local $q f64)
    (local.set $q (f64.div (local.get $luma) (local.get $ref)))
    (if (i32.or (f64.lt (local.get $q) (f64.const 0.35)) (f64.gt (local.get $q) (f64.const 1.9)))
      (then (return (f64.const 0))))
    (if (f64.lt (local.get $q) (f64.const 0.6))
      (then (return (f64.mul (f64.sub (local.get $q) (f64.const 0.35)) (f64.const 4)))))
    (if (f64.gt (local.get $q) (f64.const 1.5))
      (then (return (f64.mul (f64.sub (f64.const 1.9) (local.get $q)) (f64.const 2.5)))))
    (f64.const 1))
  ;; The sum of four unsigned 32-bit lanes, exactly.
  (func $lanes (param $v v128) (result f64)
    (f64.add
      (f64.add (f64.convert_i32_u (i32x4.extract_lane 0 (local.get $v))) (f64.convert_i32_u (i32x4.extract_lane 1 (local.get $v))))
      (f64.add (f64.convert_i32_u (i32x4.extract_lane 2 (local.get $v))) (f64.convert_i32_u (i32x4.extract_lane 3 (local.get $v)))))))
