/**
 * What a node's hand-back did, in words (pure; workflow code uses it).
 *
 * `releaseNode` answers `uncordoned: false` for several reasons; saying "it was unschedulable
 * before the plan" for all of them was false when an admin had uncordoned the node meanwhile or the
 * operator had handed it back already.
 */

/**
 * Why `releaseNode` did not uncordon the node: `notClaimed` (the node no longer carries this plan's
 * claim: handed back already, e.g. by the operator), `gone` (the node does not exist),
 * `notAsked` (uncordon was false), `wasUnschedulable` (it was unschedulable before the plan
 * cordoned it), `alreadySchedulable` (someone uncordoned it meanwhile), `replaced` (the claimed
 * Node was deleted and another created under its name: another `metadata.uid`, not this plan's).
 */
export type NotUncordoned =
  'notClaimed' | 'gone' | 'notAsked' | 'wasUnschedulable' | 'alreadySchedulable' | 'replaced';

/** The words for a hand-back's answer; one without `left` reads as `wasUnschedulable`. */
export function handBackWording(res: { uncordoned: boolean; left?: NotUncordoned }): string {
  if (res.uncordoned) return 'uncordoned';
  switch (res.left) {
    case 'notClaimed':
      return 'no longer claimed by this plan (handed back already); left as it is';
    case 'gone':
      return 'the node is gone';
    case 'replaced':
      return "the node was deleted and created again under its name: the new node is not this plan's; left as it is";
    case 'notAsked':
      return 'left cordoned';
    case 'alreadySchedulable':
      return 'already schedulable: uncordoned by someone else meanwhile';
    default:
      return 'left unschedulable: it was before the plan';
  }
}
