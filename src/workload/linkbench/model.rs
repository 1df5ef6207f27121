//! LinkBench's model of the social graph, as numbers: how many links a node
//! has, which ids requests touch, how large payloads are and what they look
//! like. Each function says which part of the original (`facebookarchive/
//! linkbench`) it follows; the random draws are relbench's own, so the
//! graph has the original's shape but not its exact ids.

use rand::Rng as _;
use rand_distr::{Distribution, Geometric, LogNormal, Zipf};

use crate::workload::dist::Rng;

/// Out-degree of a node at each quantile: `(links, cumulative probability)`.
/// Derived from the `nlinks` section of the original's
/// `config/Distribution.dat` (19,951 points, measured on Facebook's graph):
/// every point up to 100 links as it is, then runs of points whose counts
/// lie within 4% of each other merged into one point carrying their
/// probability-weighted mean, and the largest (961,963 links) kept. The
/// mean out-degree is 4.0972 both ways.
#[rustfmt::skip]
const DEGREE: [(u32, f64); 300] = [
    (0, 0.4533160573), (1, 0.7746259112), (2, 0.8695805953), (3, 0.9199305428),
    (4, 0.9445079910), (5, 0.9582807169), (6, 0.9672252805), (7, 0.9732008855),
    (8, 0.9776142319), (9, 0.9807767693), (10, 0.9832803368), (11, 0.9853703922),
    (12, 0.9870025671), (13, 0.9882537746), (14, 0.9893357097), (15, 0.9902687903),
    (16, 0.9910803256), (17, 0.9917988071), (18, 0.9923667679), (19, 0.9928327320),
    (20, 0.9932695560), (21, 0.9936195230), (22, 0.9939424934), (23, 0.9942236800),
    (24, 0.9944785747), (25, 0.9947017018), (26, 0.9949100580), (27, 0.9950874797),
    (28, 0.9952580526), (29, 0.9954208681), (30, 0.9955693901), (31, 0.9957005170),
    (32, 0.9958311566), (33, 0.9959499064), (34, 0.9960647576), (35, 0.9961687629),
    (36, 0.9962717968), (37, 0.9963636028), (38, 0.9964527351), (39, 0.9965339353),
    (40, 0.9966141380), (41, 0.9966853780), (42, 0.9967560878), (43, 0.9968190468),
    (44, 0.9968817489), (45, 0.9969404702), (46, 0.9969964882), (47, 0.9970472545),
    (48, 0.9970974313), (49, 0.9971438117), (50, 0.9972156049), (51, 0.9972595948),
    (52, 0.9973036473), (53, 0.9973452599), (54, 0.9973873632), (55, 0.9974248139),
    (56, 0.9974615205), (57, 0.9974964556), (58, 0.9975313940), (59, 0.9975628751),
    (60, 0.9975956997), (61, 0.9976255542), (62, 0.9976564888), (63, 0.9976843414),
    (64, 0.9977143704), (65, 0.9977405899), (66, 0.9977669377), (67, 0.9977916195),
    (68, 0.9978154320), (69, 0.9978381415), (70, 0.9978607028), (71, 0.9978826780),
    (72, 0.9979035667), (73, 0.9979235334), (74, 0.9979433815), (75, 0.9979627489),
    (76, 0.9979823271), (77, 0.9980001799), (78, 0.9980176079), (79, 0.9980348319),
    (80, 0.9980517989), (81, 0.9980675313), (82, 0.9980834776), (83, 0.9980986996),
    (84, 0.9981138162), (85, 0.9981282249), (86, 0.9981422318), (87, 0.9981555408),
    (88, 0.9981695576), (89, 0.9981826525), (90, 0.9981957771), (91, 0.9982080093),
    (92, 0.9982207848), (93, 0.9982322565), (94, 0.9982443208), (95, 0.9982556475),
    (96, 0.9982667471), (97, 0.9982778664), (98, 0.9982890812), (99, 0.9982996342),
    (100, 0.9983136115), (103, 0.9983626853), (108, 0.9984068399), (113, 0.9984475404),
    (118, 0.9984852348), (123, 0.9985192513), (128, 0.9985577425), (134, 0.9985933230),
    (140, 0.9986263385), (146, 0.9986565387), (152, 0.9986862682), (159, 0.9987164388),
    (166, 0.9987450619), (173, 0.9987711925), (181, 0.9987997596), (188, 0.9988266376),
    (196, 0.9988513523), (205, 0.9988771568), (214, 0.9989007488), (223, 0.9989225857),
    (232, 0.9989454400), (242, 0.9989666480), (252, 0.9989863908), (263, 0.9990074046),
    (274, 0.9990265119), (285, 0.9990463337), (298, 0.9990653422), (310, 0.9990842421),
    (323, 0.9991023517), (337, 0.9991211067), (350, 0.9991390386), (365, 0.9991568815),
    (380, 0.9991735456), (395, 0.9991904633), (412, 0.9992074403), (429, 0.9992232944),
    (446, 0.9992389148), (465, 0.9992545912), (484, 0.9992694411), (504, 0.9992843634),
    (524, 0.9992989663), (545, 0.9993136648), (568, 0.9993279549), (591, 0.9993421430),
    (616, 0.9993560578), (641, 0.9993704434), (668, 0.9993841014), (696, 0.9993980260),
    (724, 0.9994110617), (753, 0.9994239491), (784, 0.9994365271), (815, 0.9994488219),
    (848, 0.9994619563), (883, 0.9994743137), (919, 0.9994867764), (956, 0.9994987551),
    (995, 0.9995110861), (1036, 0.9995226993), (1078, 0.9995344739), (1121, 0.9995458829),
    (1166, 0.9995571965), (1213, 0.9995680722), (1262, 0.9995794746), (1313, 0.9995901099),
    (1366, 0.9996008868), (1421, 0.9996116308), (1478, 0.9996220224), (1538, 0.9996324305),
    (1600, 0.9996427991), (1664, 0.9996529306), (1731, 0.9996628843), (1800, 0.9996727228),
    (1873, 0.9996822912), (1948, 0.9996920803), (2027, 0.9997016751), (2108, 0.9997111909),
    (2194, 0.9997206540), (2284, 0.9997299788), (2374, 0.9997392905), (2469, 0.9997482761),
    (2568, 0.9997567910), (2671, 0.9997652399), (2778, 0.9997734749), (2890, 0.9997817164),
    (3006, 0.9997898163), (3126, 0.9997977549), (3252, 0.9998053478), (3381, 0.9998128057),
    (3518, 0.9998199574), (3660, 0.9998272341), (3805, 0.9998339479), (3958, 0.9998407505),
    (4118, 0.9998471975), (4282, 0.9998535128), (4454, 0.9998598183), (4633, 0.9998658241),
    (4818, 0.9998718760), (5009, 0.9998775427), (5212, 0.9998831929), (5420, 0.9998883986),
    (5638, 0.9998935516), (5866, 0.9998986322), (6101, 0.9999033110), (6345, 0.9999081611),
    (6601, 0.9999128565), (6864, 0.9999171172), (7136, 0.9999213318), (7430, 0.9999255398),
    (7723, 0.9999296622), (8030, 0.9999333994), (8354, 0.9999371431), (8688, 0.9999406399),
    (9033, 0.9999438733), (9394, 0.9999470145), (9775, 0.9999501623), (10160, 0.9999531323),
    (10571, 0.9999558816), (10993, 0.9999586014), (11443, 0.9999612322), (11884, 0.9999638268),
    (12370, 0.9999661877), (12876, 0.9999682653), (13373, 0.9999704484), (13907, 0.9999723746),
    (14485, 0.9999742185), (15059, 0.9999760031), (15665, 0.9999777811), (16278, 0.9999793616),
    (16934, 0.9999808631), (17622, 0.9999821044), (18323, 0.9999833194), (19054, 0.9999845047),
    (19826, 0.9999857131), (20637, 0.9999868656), (21482, 0.9999879390), (22342, 0.9999888313),
    (23248, 0.9999897467), (24178, 0.9999905204), (25139, 0.9999913041), (26159, 0.9999920219),
    (27236, 0.9999926640), (28286, 0.9999933093), (29415, 0.9999938559), (30624, 0.9999943169),
    (31878, 0.9999948042), (33147, 0.9999952026), (34504, 0.9999956603), (35983, 0.9999960554),
    (37244, 0.9999964275), (38776, 0.9999967469), (40426, 0.9999970366), (42033, 0.9999973099),
    (43753, 0.9999975733), (45554, 0.9999978137), (47396, 0.9999980014), (49316, 0.9999981693),
    (51282, 0.9999982878), (53382, 0.9999984557), (55665, 0.9999986105), (57904, 0.9999987192),
    (60142, 0.9999988245), (62746, 0.9999989628), (65186, 0.9999990517), (67772, 0.9999991340),
    (70737, 0.9999992262), (73671, 0.9999993085), (76883, 0.9999993579), (79713, 0.9999994238),
    (82642, 0.9999994732), (86862, 0.9999995324), (90874, 0.9999995621), (94691, 0.9999995983),
    (98363, 0.9999996279), (102569, 0.9999996576), (108719, 0.9999996872), (114092, 0.9999997168),
    (118244, 0.9999997399), (123262, 0.9999997629), (130270, 0.9999997794), (136328, 0.9999997926),
    (141775, 0.9999998090), (147621, 0.9999998222), (157443, 0.9999998452), (167290, 0.9999998518),
    (175967, 0.9999998650), (183816, 0.9999998946), (199497, 0.9999999144), (206909, 0.9999999210),
    (213827, 0.9999999276), (228408, 0.9999999341), (239705, 0.9999999506), (248486, 0.9999999539),
    (277355, 0.9999999638), (295069, 0.9999999737), (314867, 0.9999999802), (415137, 0.9999999868),
    (450999, 0.9999999901), (485372, 0.9999999934), (906857, 0.9999999967), (961963, 1.0000000000),
];

/// The mean of [`DEGREE`]: links per node before they are split by type.
pub fn mean_degree() -> f64 {
    let mut prev = 0.0;
    DEGREE
        .iter()
        .map(|&(v, p)| {
            let m = f64::from(v) * (p - prev);
            prev = p;
            m
        })
        .sum()
}

/// A bijection of `[0, n)`: `x → (a·x + b) mod n`, with `a` coprime to
/// `n`. The original shuffles ids with seeded permutations so that the
/// most linked and the most requested ids are spread over the id space,
/// and uses the same permutation for the degree and for the "correlated"
/// requests so those go to the nodes with the most links; this plays the
/// same part (cheaper than the original's, and invertible in O(1)).
#[derive(Debug, Clone, Copy)]
pub struct Shuffle {
    n: i64,
    a: i64,
    a_inv: i64,
    b: i64,
}

impl Shuffle {
    pub fn new(n: i64, seed: u64) -> Shuffle {
        let n = n.max(1);
        if n == 1 {
            return Shuffle {
                n,
                a: 1,
                a_inv: 0,
                b: 0,
            };
        }
        // A multiplier near n·φ (so neighbours land far apart), moved up
        // until it is coprime to n.
        let mut a = ((n as f64 * 0.618_033_988_7) as i64 + (seed % 1021) as i64) % n;
        while a == 0 || gcd(a, n) != 1 {
            a = (a + 1) % n;
        }
        Shuffle {
            n,
            a,
            a_inv: inverse(a, n),
            b: (seed % n as u64) as i64,
        }
    }

    pub fn permute(&self, x: i64) -> i64 {
        ((x as i128 * self.a as i128 + self.b as i128) % self.n as i128) as i64
    }

    pub fn invert(&self, y: i64) -> i64 {
        ((((y - self.b) as i128).rem_euclid(self.n as i128) * self.a_inv as i128) % self.n as i128)
            as i64
    }
}

fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

/// `a⁻¹ mod n` by the extended Euclidean algorithm (`a` coprime to `n`).
fn inverse(a: i64, n: i64) -> i64 {
    if n == 1 {
        return 0;
    }
    let (mut t, mut new_t) = (0i128, 1i128);
    let (mut r, mut new_r) = (n as i128, a as i128);
    while new_r != 0 {
        let q = r / new_r;
        (t, new_t) = (new_t, t - q * new_t);
        (r, new_r) = (new_r, r - q * new_r);
    }
    t.rem_euclid(n as i128) as i64
}

/// The original's permutation seeds (`RealDistribution`): one shared by the
/// degree and the correlated link requests, one for the uncorrelated link
/// requests, one for node requests.
pub const DEGREE_SEED: u64 = 20_343_988_438_726_021;
pub const UNCORR_SEED: u64 = 53_238_253_823_453;
pub const NODE_SEED: u64 = 4_766_565_305_853_767_165;

/// How many links each node has.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase", tag = "func", content = "links")]
pub enum Degree {
    /// The measured distribution (`nlinks_func = real`, the default).
    Real,
    /// Every node the same (`nlinks_func = const`, `nlinks_default`).
    Const(u32),
}

/// The id space and the degree of each id.
#[derive(Debug, Clone, Copy)]
pub struct Graph {
    pub start: i64,
    /// One past the last id loaded (`maxid1`).
    pub end: i64,
    pub link_types: u32,
    pub degree: Degree,
    shuffle: Shuffle,
}

/// The original's `LinkStore.DEFAULT_LINK_TYPE`: link types are this and
/// the next `link_type_count - 1` numbers.
pub const FIRST_LINK_TYPE: i64 = 123_456_789;
/// `LinkStore.DEFAULT_NODE_TYPE`.
pub const NODE_TYPE: i64 = 2048;

impl Graph {
    pub fn new(start: i64, end: i64, link_types: u32, degree: Degree) -> Graph {
        Graph {
            start,
            end,
            link_types: link_types.max(1),
            degree,
            shuffle: Shuffle::new(end - start, DEGREE_SEED),
        }
    }

    pub fn nodes(&self) -> i64 {
        (self.end - self.start).max(0)
    }

    /// All links of `id1` (`ID2Chooser.calcTotalLinkCount`): the node's
    /// place in the degree permutation read as a quantile, most linked at
    /// the top (`PiecewiseLinearDistribution.expectedCount`).
    pub fn total_links(&self, id1: i64) -> u64 {
        if id1 < self.start || id1 >= self.end {
            return 0;
        }
        match self.degree {
            Degree::Const(n) => u64::from(n),
            Degree::Real => {
                let rank = self.shuffle.invert(id1 - self.start);
                let u = 1.0 - rank as f64 / self.nodes() as f64;
                let i = DEGREE.partition_point(|&(_, p)| p < u);
                u64::from(DEGREE[i.min(DEGREE.len() - 1)].0)
            }
        }
    }

    /// Links of one type (`ID2Chooser.calcLinkCount`), computed as the
    /// original does: `leftOver` there is `total - total / types`, so with
    /// two types a node with an odd total gets one more link than its total.
    /// Kept, so the graph has the original's size.
    pub fn links(&self, id1: i64, link_type: i64) -> u64 {
        let total = self.total_links(id1);
        let types = u64::from(self.link_types);
        let min = total / types;
        let left_over = total - min;
        let type_num = (link_type - FIRST_LINK_TYPE).max(0) as u64;
        if type_num < left_over {
            min + 1
        } else {
            min
        }
    }

    pub fn link_type(&self, rng: &mut Rng) -> i64 {
        FIRST_LINK_TYPE + i64::from(rng.random_range(0..self.link_types))
    }

    /// An id2 for an operation on `(id1, link_type)` (`ID2Chooser.chooseForOp`):
    /// loaded links go to `id1 .. id1 + links`, so a draw from a range
    /// `1 / p_exist` times as wide finds an existing link with probability
    /// about `p_exist`.
    pub fn id2(&self, rng: &mut Rng, id1: i64, link_type: i64, p_exist: f64) -> i64 {
        let range = self.id2_range(id1, link_type, p_exist);
        id1 + rng.random_range(0..range)
    }

    fn id2_range(&self, id1: i64, link_type: i64, p_exist: f64) -> i64 {
        ((self.links(id1, link_type) as f64 / p_exist).ceil() as i64).max(1)
    }

    /// `n` distinct id2s (`chooseMultipleForOp`): the first `n` when the
    /// range is no wider, else distinct draws.
    pub fn id2s(&self, rng: &mut Rng, id1: i64, link_type: i64, n: usize, out: &mut Vec<i64>) {
        out.clear();
        let range = self.id2_range(id1, link_type, P_GET_EXIST);
        if range <= n as i64 {
            out.extend((0..n as i64).map(|i| id1 + i));
            return;
        }
        while out.len() < n {
            let id2 = id1 + rng.random_range(0..range);
            if !out.contains(&id2) {
                out.push(id2);
            }
        }
    }
}

/// `ID2Chooser`'s chances that an operation's id2 names a loaded link.
pub const P_GET_EXIST: f64 = 0.5;
pub const P_UPDATE_EXIST: f64 = 0.9;
pub const P_DELETE_EXIST: f64 = 0.9;
pub const P_ADD_EXIST: f64 = 0.05;

/// Which ids requests touch (`AccessDistributions`): a Zipf rank over the
/// loaded ids, through a permutation; a share of draws (the `*_uncorr_blend`
/// percentages) use a second permutation, unrelated to the degree.
#[derive(Debug, Clone)]
pub struct Access {
    start: i64,
    zipf: Option<Zipf<f64>>,
    n: i64,
    main: Shuffle,
    other: Option<(f64, Shuffle)>,
}

impl Access {
    /// Zipf with `shape` (or uniform when `shape` is `None`) over
    /// `[start, end)`, through `main`, or through `other` with chance
    /// `blend` (0..=1).
    pub fn new(
        start: i64,
        end: i64,
        shape: Option<f64>,
        main: u64,
        blend: Option<(f64, u64)>,
    ) -> Access {
        let n = (end - start).max(1);
        Access {
            start,
            zipf: shape.map(|s| Zipf::new(n as f64, s).expect("zipf parameters are valid")),
            n,
            main: Shuffle::new(n, main),
            other: blend
                .filter(|(b, _)| *b > 0.0)
                .map(|(b, seed)| (b, Shuffle::new(n, seed))),
        }
    }

    #[inline]
    pub fn id(&self, rng: &mut Rng) -> i64 {
        let rank = match &self.zipf {
            Some(z) => (z.sample(rng) as i64 - 1).clamp(0, self.n - 1),
            None => return self.start + rng.random_range(0..self.n),
        };
        let shuffle = match &self.other {
            Some((blend, s)) if rng.random::<f64>() < *blend => s,
            _ => &self.main,
        };
        self.start + shuffle.permute(rank)
    }
}

/// A payload size (`LogNormalDistribution` with the original's sigma of
/// 1.0): median `median`, at most `max`.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    dist: LogNormal<f64>,
    max: usize,
}

impl Size {
    pub fn new(median: f64, max: usize) -> Size {
        Size {
            dist: LogNormal::new(median.max(1e-9).ln(), 1.0).expect("valid lognormal"),
            max,
        }
    }

    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> usize {
        (self.dist.sample(rng).round() as usize).min(self.max)
    }
}

/// The original's `LinkStore.MAX_LINK_DATA` and `NodeStore.MAX_NODE_DATA`.
pub const MAX_LINK_DATA: usize = 255;
pub const MAX_NODE_DATA: usize = 1024 * 1024;

/// Payload bytes as the original's `MotifDataGenerator` makes them: chunks
/// that are either fresh random bytes (with chance `uniqueness`) or a copy
/// from a fixed motif, so the data compresses about as the original's does.
#[derive(Debug, Clone)]
pub struct Motif {
    lo: u8,
    hi: u8,
    uniqueness: f64,
    motif: Vec<u8>,
}

/// The original's `MAX_CHUNK_SIZE`.
const CHUNK: usize = 128;

impl Motif {
    /// Bytes from `lo` to `hi`, both included (the original's
    /// `MotifDataGenerator`: `range = end - start + 1`), a motif of `len`
    /// bytes.
    pub fn new(rng: &mut Rng, lo: u8, hi: u8, uniqueness: f64, len: usize) -> Motif {
        let motif = (0..len.max(1)).map(|_| rng.random_range(lo..=hi)).collect();
        Motif {
            lo,
            hi,
            uniqueness,
            motif,
        }
    }

    /// Appends `n` bytes to `out` (cleared first).
    pub fn fill(&self, rng: &mut Rng, n: usize, out: &mut String) {
        out.clear();
        let chunk = CHUNK.min(self.motif.len());
        let mut i = 0;
        while i < n {
            let len = chunk.min(n - i);
            if rng.random::<f64>() < self.uniqueness {
                for _ in 0..len {
                    out.push(latin1(rng.random_range(self.lo..=self.hi)));
                }
            } else {
                let k = rng.random_range(0..=self.motif.len() - len);
                out.extend(self.motif[k..k + len].iter().map(|&b| latin1(b)));
            }
            i += chunk;
        }
    }
}

/// The character MySQL's and MariaDB's `latin1` (Windows-1252, its five
/// unassigned bytes kept as the C1 controls) reads byte `b` as: sent in
/// UTF-8, the latin1 column stores `b` itself, the byte the original
/// writes. (0x87 sent as U+0087 was refused: "Incorrect string value".)
pub fn latin1(b: u8) -> char {
    match b {
        0x80..=0x9f => LATIN1_HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

/// The byte [`latin1`] made `c` from, for a bulk file MySQL reads without
/// converting (`CHARACTER SET binary`).
pub fn latin1_byte(c: char) -> u8 {
    match LATIN1_HIGH.iter().position(|&h| h == c) {
        Some(i) => 0x80 + i as u8,
        None => u8::try_from(u32::from(c)).unwrap_or(b'?'),
    }
}

/// What Windows-1252 reads bytes 0x80 … 0x9F as.
const LATIN1_HIGH: [char; 32] = [
    '\u{20ac}', '\u{81}', '\u{201a}', '\u{192}', '\u{201e}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{2c6}', '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8d}', '\u{17d}', '\u{8f}',
    '\u{90}', '\u{2018}', '\u{2019}', '\u{201c}', '\u{201d}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{2dc}', '\u{2122}', '\u{161}', '\u{203a}', '\u{153}', '\u{9d}', '\u{17e}', '\u{178}',
];

/// How many links a multiget asks for (`GeometricDistribution` with the
/// original's `link_multiget_dist_*`): its quantile function is
/// `min + ceil(ln(1 − r) / ln(1 − p))`, so `min` plus the *trials* up to
/// a success of chance `p` (one or more), truncated at `max − 1`. With the
/// FBWorkload figures: at least 2, mean 3.62. (relbench drew the failures
/// before the success, zero or more: at least 1, mean 2.62, and 37% of
/// multigets asked for one link where the original asks for two.)
#[derive(Debug, Clone, Copy)]
pub struct Multiget {
    min: usize,
    max: usize,
    dist: Geometric,
}

impl Multiget {
    pub fn new(min: u32, max: u32, p: f64) -> Multiget {
        Multiget {
            min: min.max(1) as usize,
            max: max.max(min.max(1)) as usize,
            dist: Geometric::new(p.clamp(1e-6, 1.0)).expect("valid geometric"),
        }
    }

    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> usize {
        let trials = self.dist.sample(rng) as usize + 1;
        (self.min + trials).min(self.max.saturating_sub(1).max(self.min))
    }
}

/// A link's initial time (`LinkBenchLoad.chooseInitialTimestamp`): now less
/// 2³¹ ms, plus a random 32-bit integer: up to about 25 days either side of
/// 25 days ago, in milliseconds.
pub fn initial_time(rng: &mut Rng, now_ms: i64) -> i64 {
    now_ms - (1i64 << 31) + i64::from(rng.random::<i32>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::dist;

    #[test]
    fn latin1_characters_map_back_to_their_bytes() {
        for b in 50..220u8 {
            assert_eq!(latin1_byte(latin1(b)), b);
        }
    }

    #[test]
    fn the_shuffle_is_a_bijection_and_inverts() {
        for n in [1i64, 2, 7, 1000, 1024, 999_983] {
            let s = Shuffle::new(n, DEGREE_SEED);
            let mut seen = std::collections::HashSet::new();
            for x in 0..n.min(5000) {
                let y = s.permute(x);
                assert!((0..n).contains(&y));
                assert!(seen.insert(y), "n={n}: {x} collides");
                assert_eq!(s.invert(y), x, "n={n}");
            }
        }
    }

    #[test]
    fn the_degree_table_keeps_the_originals_mean_and_tail() {
        assert!((mean_degree() - 4.0973).abs() < 0.001, "{}", mean_degree());
        // The most linked node has the table's largest degree, at any
        // scale (the original reads the top quantile as its last point);
        // the other nodes have about the mean.
        let g = Graph::new(1, 1_000_001, 1, Degree::Real);
        let total: u64 = (1..1_000_001).map(|id| g.total_links(id)).sum();
        let max = (1..1_000_001).map(|id| g.total_links(id)).max().unwrap();
        assert_eq!(max, 961_963);
        let per_node = (total - max) as f64 / 1e6;
        assert!((per_node - 4.0973).abs() < 0.15, "{per_node}");
        // 45% of nodes have no link (the table's first point).
        let zero = (1..1_000_001).filter(|&id| g.total_links(id) == 0).count();
        assert!((zero as f64 / 1e6 - 0.4533).abs() < 0.002, "{zero}");
    }

    #[test]
    fn links_per_type_follow_the_originals_arithmetic() {
        let g = Graph::new(1, 11, 2, Degree::Const(5));
        // total 5, two types: min 2, leftOver 3: both types get 3.
        assert_eq!(g.links(1, FIRST_LINK_TYPE), 3);
        assert_eq!(g.links(1, FIRST_LINK_TYPE + 1), 3);
        let g = Graph::new(1, 11, 2, Degree::Const(1));
        assert_eq!(g.links(1, FIRST_LINK_TYPE), 1);
        assert_eq!(g.links(1, FIRST_LINK_TYPE + 1), 0);
        assert_eq!(g.links(11, FIRST_LINK_TYPE), 0, "past maxid1");
    }

    #[test]
    fn correlated_requests_go_to_the_most_linked_nodes() {
        // Without a blend, the hottest rank is the node with the most links.
        let g = Graph::new(1, 100_001, 1, Degree::Real);
        let a = Access::new(1, 100_001, Some(0.8), DEGREE_SEED, None);
        let mut rng = dist::rng(1, 1);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..200_000 {
            *counts.entry(a.id(&mut rng)).or_insert(0u32) += 1;
        }
        let hottest = counts.iter().max_by_key(|(_, n)| **n).unwrap().0;
        assert_eq!(g.total_links(*hottest), 961_963);
        // Uncorrelated draws stay in range too.
        let u = Access::new(1, 100_001, Some(0.8), DEGREE_SEED, Some((1.0, UNCORR_SEED)));
        for _ in 0..10_000 {
            assert!((1..100_001).contains(&u.id(&mut rng)));
        }
    }

    #[test]
    fn payloads_have_the_median_and_bytes_asked() {
        let mut rng = dist::rng(2, 2);
        let s = Size::new(128.0, MAX_NODE_DATA);
        let mut v: Vec<usize> = (0..20_001).map(|_| s.draw(&mut rng)).collect();
        v.sort();
        assert!((110..150).contains(&v[10_000]), "median {}", v[10_000]);
        let m = Motif::new(&mut rng, 32, 100, 0.225, 128);
        let mut out = String::new();
        m.fill(&mut rng, 3000, &mut out);
        assert_eq!(out.len(), 3000);
        // Regression: the last byte was never drawn (the original
        // includes it).
        assert!(out.bytes().all(|b| (32..=100).contains(&b)));
        assert!(out.bytes().any(|b| b == 100));
        // Regression (issue 32): the original's multigets are at least 2
        // links, mean 3.62, 38% of them 2; relbench's were at least 1,
        // mean 2.62.
        let mg = Multiget::new(1, 128, 0.382);
        let n: Vec<usize> = (0..10_000).map(|_| mg.draw(&mut rng)).collect();
        assert!(n.iter().all(|&k| (2..=127).contains(&k)));
        let mean = n.iter().sum::<usize>() as f64 / 1e4;
        // 1 + 1 / p = 3.62.
        assert!((mean - 3.62).abs() < 0.1, "{mean}");
        let twos = n.iter().filter(|&&k| k == 2).count() as f64 / 1e4;
        assert!((twos - 0.382).abs() < 0.02, "{twos}");
    }
}
