"""Chinese rendering of the template bank: the same items (family, parameters, key, option order) with
``zh_question`` and ``zh_A``.. fields; numbers and units (ml, mg) are kept as written."""

from __future__ import annotations

from typing import Any

from ._bank import BOLUS, EBV_ML_KG, LA_MAX_MG_KG
from ._extract import letters

NAMES = {
    "propofol": "丙泊酚",
    "midazolam": "咪达唑仑",
    "ketamine": "氯胺酮",
    "dexmedetomidine": "右美托咪定",
    "rocuronium": "罗库溴铵",
    "cisatracurium": "顺阿曲库铵",
    "succinylcholine": "琥珀胆碱",
    "fentanyl": "芬太尼",
    "ondansetron": "昂丹司琼",
    "neostigmine": "新斯的明",
    "glycopyrrolate": "格隆溴铵",
    "sugammadex": "舒更葡糖钠",
    "bupivacaine": "布比卡因",
    "chloroprocaine": "氯普鲁卡因",
    "lidocaine": "利多卡因",
    "morphine": "吗啡",
    "remifentanil": "瑞芬太尼",
    "lorazepam": "劳拉西泮",
    "vecuronium": "维库溴铵",
    "unfractionated heparin": "普通肝素",
    "dabigatran": "达比加群",
    "malignant hyperthermia": "恶性高热",
    "local anaesthetic systemic toxicity": "局麻药全身毒性反应",
    "naloxone": "纳洛酮",
    "flumazenil": "氟马西尼",
    "protamine sulfate": "硫酸鱼精蛋白",
    "idarucizumab": "依达赛珠单抗",
    "dantrolene": "丹曲林",
    "20% lipid emulsion": "20%脂肪乳剂",
    "sevoflurane": "七氟烷",
    "desflurane": "地氟烷",
    "isoflurane": "异氟烷",
    "halothane": "氟烷",
    "nitrous oxide": "氧化亚氮",
    "alkylphenol intravenous hypnotic": "烷基酚类静脉催眠药",
    "benzodiazepine": "苯二氮䓬类",
    "NMDA receptor antagonist": "NMDA受体拮抗剂",
    "alpha-2 adrenergic agonist": "α2肾上腺素能受体激动剂",
    "aminosteroid non-depolarising neuromuscular blocker": "氨基甾体类非去极化肌松药",
    "benzylisoquinolinium non-depolarising neuromuscular blocker": "苄基异喹啉类非去极化肌松药",
    "depolarising neuromuscular blocker": "去极化肌松药",
    "mu-opioid receptor agonist": "μ阿片受体激动剂",
    "5-HT3 receptor antagonist": "5-HT3受体拮抗剂",
    "acetylcholinesterase inhibitor": "乙酰胆碱酯酶抑制剂",
    "antimuscarinic (anticholinergic)": "抗毒蕈碱药（抗胆碱药）",
    "modified gamma-cyclodextrin (selective relaxant binding agent)": "修饰γ-环糊精（选择性肌松拮抗剂）",
    "amide local anaesthetic": "酰胺类局麻药",
    "ester local anaesthetic": "酯类局麻药",
    "a 40% burn sustained 10 days ago": "10天前40%体表面积烧伤",
    "a spinal cord injury 3 weeks ago": "3周前脊髓损伤",
    "Duchenne muscular dystrophy": "杜氏肌营养不良",
    "a serum potassium of 6.4 mmol/l": "血钾6.4 mmol/L",
    "adult man": "成年男性",
    "adult woman": "成年女性",
    "infant": "婴儿",
}

_VIGNETTES = {
    "fentanyl": "在麻醉恢复室，一名{age}岁使用芬太尼的患者呼吸频率{rr}次/分，瞳孔针尖样，难以唤醒。",
    "morphine": "一名{age}岁使用吗啡PCA的患者被发现呼吸频率{rr}次/分，瞳孔针尖样。",
    "midazolam": "一名{age}岁患者在内镜检查咪达唑仑镇静后仍无法唤醒，呼吸频率{rr}次/分，未使用阿片类药物。",
    "rocuronium": "腹腔镜手术结束时，一名{age}岁使用罗库溴铵的患者四个成串刺激计数为0，强直后计数为{ptc}。",
    "unfractionated heparin": "一名{age}岁患者体外循环（使用普通肝素）结束后"
    "活化凝血时间为{act}秒，需要中和肝素。",
    "dabigatran": "一名{age}岁服用达比加群的患者需在1小时内行急诊剖腹手术。",
    "malignant hyperthermia": "七氟烷麻醉中，一名{age}岁患者出现咬肌强直，"
    "呼气末二氧化碳{etco2} mmHg，体温39.{t}℃。",
    "local anaesthetic systemic toxicity": "布比卡因神经阻滞后不久，"
    "一名{age}岁患者出现抽搐，随后发生室性心动过速。",
}


def _question(family: str, p: dict[str, Any]) -> str:
    n = NAMES.get
    if family == "drug_class":
        return f"{n(p['subject'])}属于哪一类药物？"
    if family == "antidote":
        return f"{n(p['subject'])}的特异性拮抗剂或治疗药物是什么？"
    if family == "mac":
        return f"40岁成人在纯氧中{n(p['subject'])}的最低肺泡有效浓度（MAC）是多少？"
    if family == "blood_gas":
        return f"37℃时{n(p['subject'])}的血/气分配系数是多少？"
    if family == "vignette_antidote":
        return _VIGNETTES[p["subject"]].format(**p) + "应使用哪种药物？"
    if family == "vignette_succinylcholine":
        return f"一名{p['age']}岁、有{n(p['risk'])}的患者需行快速顺序诱导。应避免使用哪种肌松药？"
    if family == "mabl":
        return (
            f"一名体重{p['weight']} kg的{n(p['who'])}红细胞压积为{p['hi']}%。"
            f"以{p['hf']}%为可接受的最低红细胞压积，"
            f"估计血容量按{EBV_ML_KG[p['who']]} ml/kg计算，最大允许失血量是多少？"
        )
    if family == "fluids_421":
        return (
            f"一名{p['weight']} kg的患儿术前禁食{p['hours']}小时。"
            "按4-2-1法则，在维持量之外于第1小时补充一半禁食缺失量，"
            "第1小时应输注多少液体？"
        )
    if family == "local_anaesthetic_max":
        label = "含肾上腺素" if p["adrenaline"] else "不含肾上腺素"
        dose = LA_MAX_MG_KG[p["drug"]][int(p["adrenaline"])]
        return (
            f"体重{p['weight']} kg的成人，以{dose:g} mg/kg为最大剂量，{label}的{p['conc_pct']:g}%"
            f"{n(p['drug'])}最大容量是多少？"
        )
    if family == "bolus_volume":
        per_kg, unit, conc = BOLUS[p["drug"]]
        return (
            f"一名{p['weight']} kg的患者拟给予{n(p['drug'])} {per_kg:g} {unit}/kg，药瓶浓度为"
            f"{conc:g} {unit}/ml。应抽取多少毫升？"
        )
    sex = "男性" if p["male"] else "女性"
    if family == "ibw_rocuronium":
        return (
            f"一名肥胖{sex}，身高{p['height']} cm，体重{p['weight']} kg，罗库溴铵按理想体重（Devine公式）"
            "0.6 mg/kg给药，剂量是多少？"
        )
    return (
        f"一名肥胖{sex}，身高{p['height']} cm，体重{p['weight']} kg，丙泊酚按瘦体重（Janmahasatian公式）"
        "2 mg/kg诱导，剂量是多少？"
    )


def add_chinese(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with ``zh_question`` and ``zh_A``.. (option texts translated, numbers kept)."""
    out = dict(record)
    out["zh_question"] = _question(record["family"], record["params"])
    for c in letters(record["choice_num"]):
        text = record[f"en_{c}"]
        out[f"zh_{c}"] = NAMES.get(text, text)
    return out
