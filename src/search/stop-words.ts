// English function words left out of BM25: they carry almost no signal, and each one costs a
// scan of a posting list that covers most entities. Content words are never listed here.

export const ENGLISH_STOP_WORDS: readonly string[] = [
  'a', 'an', 'the', 'and', 'or', 'but', 'nor', 'so', 'yet', 'if', 'then', 'than', 'as', 'because', 'while', 'although', 'though',
  'of', 'in', 'on', 'at', 'to', 'from', 'by', 'for', 'with', 'without', 'into', 'onto', 'upon', 'about', 'over', 'under', 'between', 'through', 'during', 'within', 'among', 'per', 'via',
  'is', 'are', 'was', 'were', 'be', 'been', 'being', 'am', 'do', 'does', 'did', 'done', 'have', 'has', 'had', 'having',
  'will', 'would', 'shall', 'should', 'can', 'could', 'may', 'might', 'must',
  'i', 'me', 'my', 'mine', 'we', 'us', 'our', 'ours', 'you', 'your', 'yours', 'he', 'him', 'his', 'she', 'her', 'hers', 'it', 'its', 'they', 'them', 'their', 'theirs',
  'this', 'that', 'these', 'those', 'there', 'here', 'who', 'whom', 'whose', 'which', 'what', 'when', 'where', 'why', 'how',
  'not', 'no', 'all', 'any', 'some', 'each', 'every', 'such', 'very', 'too', 'also', 'just', 'only', 'own', 'same', 'other', 'more', 'most', 'much', 'many',
  's', 't', 'd', 'll', 're', 've', 'm',
]
