#include "gui/diagnosis_view.h"

#include <QLabel>
#include <QListWidget>
#include <QVBoxLayout>
#include <utility>

namespace servesim::gui {

DiagnosisView::DiagnosisView(QWidget* parent) : QWidget(parent), list_(new QListWidget(this)) {
  auto* title = new QLabel(tr("<b>Why</b> (diagnosis from the run's numbers)"), this);
  list_->setWordWrap(true);
  list_->setAlternatingRowColors(true);
  list_->setObjectName(QStringLiteral("diagnosis_list"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title);
  layout->addWidget(list_);
}

QString DiagnosisView::evidence_text(const Finding& finding) {
  QStringList lines;
  for (const Evidence& e : finding.evidence) {
    lines
        << QStringLiteral("%1 = %2").arg(QString::fromStdString(e.metric)).arg(e.value, 0, 'g', 6);
  }
  return lines.join(QLatin1Char('\n'));
}

void DiagnosisView::set_findings(std::vector<Finding> findings) {
  findings_ = std::move(findings);
  list_->clear();
  for (const Finding& f : findings_) {
    const QString evidence = evidence_text(f);
    QString text = QString::fromStdString(f.text);
    if (!evidence.isEmpty()) text += QLatin1Char('\n') + evidence;
    auto* item = new QListWidgetItem(text, list_);
    item->setToolTip(QStringLiteral("%1\n%2").arg(QString::fromStdString(f.code), evidence));
    item->setData(Qt::UserRole, QString::fromStdString(f.code));
  }
}

void DiagnosisView::clear() {
  set_findings({});
}

}  // namespace servesim::gui
