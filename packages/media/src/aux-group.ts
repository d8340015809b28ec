/**
 * Aux images per group of an aux series (aux-analyzer.ts `AuxSeries`): the first of each group is
 * a full detection, the others start FaceMesh from its detector box. 4 s of a capture at the spec's
 * 2 Hz. Measured on 765 aux images of six UBFC-rPPG videos against a full detection of each
 * (docs/media.md, "Aux analyses"): per capture, the mean emotion probabilities and the mean gaze
 * move about as much as when every image is shifted by one pixel. A module of its own so that the
 * pools' callers can split a capture's images at group boundaries without loading the models.
 */
export const AUX_GROUP = 8;
